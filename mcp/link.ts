import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { StatusTrackerError, type StatusTracker } from '../client/src/index.js'

// link_session: the session is created when it does not exist yet (QR without a phone number, a pairing
// code with one), then the tool waits a little for the code the platform issues and hands it over: the QR
// code as a PNG image content item, the pairing code as text. A QR code is replaced about every 20 seconds
// while nobody scans it (the platform's refs), so an assistant calls the tool again for the current one.
// A session that exists but gets no code (logged out from the phone, or its link window over) is started
// again: a fresh pairing code, or a restart for a new QR code (both need the manage scope).

export interface LinkArgs { sessionId: string, sessionName?: string, phoneNumber?: string | null }

export interface LinkOptions {
  /** how long to wait for the platform's code after creating the session (ms) */
  waitMs: number
  /** between two reads of the connection state (ms) */
  everyMs?: number
}

type ConnectionState = Awaited<ReturnType<typeof connectionOf>>

async function connectionOf (st: StatusTracker, sessionId: string) {
  return await st.GET('/api/sessions/{sessionId}/connection-status', { params: { path: { sessionId } } })
}

/** the state, or null for a session that does not exist */
async function existing (st: StatusTracker, sessionId: string): Promise<ConnectionState | null> {
  try {
    return await connectionOf(st, sessionId)
  } catch (err) {
    if (err instanceof StatusTrackerError && err.status === 404) return null
    throw err
  }
}

const ready = (s: ConnectionState): boolean => s.connected || (s.authMethod === 'qrcode' ? s.qrCode !== null : s.pairingCode !== null)

const text = (value: unknown) => ({ type: 'text' as const, text: JSON.stringify(value, null, 2) })

export async function linkSession (st: StatusTracker, args: LinkArgs, options: LinkOptions): Promise<CallToolResult> {
  const { sessionId } = args
  const phoneNumber = args.phoneNumber ?? null
  let state = await existing(st, sessionId)
  const created = state === null
  let restarted = false
  if (state === null) {
    await st.POST('/api/sessions', {
      body: { sessionId, sessionName: args.sessionName ?? sessionId, authMethod: phoneNumber === null ? 'qrcode' : 'pairing', phoneNumber }
    })
    state = await connectionOf(st, sessionId)
  } else if (!ready(state) && state.status !== 'connecting' && state.ownNumber === null) {
    // logged out from the phone, or its link window (LINK_TIMEOUT_MS) ran out: no code comes by itself
    restarted = true
    if (state.authMethod === 'pairing' && state.phoneNumber !== null) {
      const fresh = await st.POST('/api/sessions/{sessionId}/request-pairing-code', { params: { path: { sessionId } } })
      state = { ...state, pairingCode: fresh.pairingCode }
    } else {
      await st.POST('/api/sessions/{sessionId}/restart', { params: { path: { sessionId } } })
      state = await connectionOf(st, sessionId)
    }
  }
  const deadline = Date.now() + options.waitMs
  while (!ready(state) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, options.everyMs ?? 250))
    state = await connectionOf(st, sessionId)
  }

  const base = { sessionId, created, ...(restarted ? { restarted } : {}), connected: state.connected, status: state.status, authMethod: state.authMethod }
  if (state.connected) {
    return { content: [text({ ...base, ownNumber: state.ownNumber, message: 'The session is linked and connected.' })] }
  }
  if (state.ownNumber !== null) {
    return { content: [text({ ...base, ownNumber: state.ownNumber, message: 'The session is linked but not connected right now; it reconnects by itself.' })] }
  }
  const ignored = !created && phoneNumber !== null && phoneNumber !== state.phoneNumber
    ? ` The session already existed: phoneNumber ${phoneNumber} was not applied (it links ${state.phoneNumber ?? 'by QR code'}).`
    : ''
  if (state.authMethod === 'qrcode' && state.qrCode !== null) {
    const [, data] = /^data:image\/png;base64,(.+)$/s.exec(state.qrCode) ?? []
    const message = 'Scan the QR code on the phone: WhatsApp → Settings → Linked devices → Link a device. ' +
      'It is replaced about every 20 seconds: call link_session again for the current one; list_sessions shows when the session is connected.' + ignored
    return {
      content: [
        text({ ...base, message }),
        ...(data !== undefined ? [{ type: 'image' as const, data, mimeType: 'image/png' }] : [])
      ]
    }
  }
  if (state.authMethod === 'pairing' && state.pairingCode !== null) {
    const message = `Enter the pairing code on the phone of ${state.phoneNumber ?? 'the number'}: WhatsApp → Settings → Linked devices → ` +
      'Link a device → Link with phone number instead. list_sessions shows when the session is connected.' + ignored
    return { content: [text({ ...base, pairingCode: state.pairingCode, phoneNumber: state.phoneNumber, message })] }
  }
  return { content: [text({ ...base, message: `No code from WhatsApp yet (status ${state.status}); call link_session again in a few seconds.${ignored}` })] }
}
