/** What a test or a benchmark talks to: the service's REST API and socket.io, and the emulator's control API. */
import { io, type Socket } from 'socket.io-client'
import type { ConnectionLogEntry } from '@status-tracker/emulator'
import { API_KEY } from './service.js'
import { waitFor } from './wait.js'

export class HttpError extends Error {
  constructor (readonly status: number, readonly body: string, what: string) {
    super(`${what} → HTTP ${status}: ${body.slice(0, 300)}`)
  }
}

async function request<T> (url: string, method: string, headers: Record<string, string>, body?: unknown): Promise<T> {
  const res = await fetch(url, {
    method,
    headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(120_000)
  })
  const text = await res.text()
  if (!res.ok) throw new HttpError(res.status, text, `${method} ${url}`)
  return (text === '' ? undefined : JSON.parse(text)) as T
}

/** The service's API; answers are unwrapped from the `{ success, data }` envelope. */
export function serviceApi (base: string, apiKey = API_KEY) {
  const headers = { 'x-api-key': apiKey }
  const call = async <T = unknown>(method: string, path: string, body?: unknown): Promise<T> =>
    (await request<{ data: T }>(`${base}/api${path}`, method, headers, body)).data
  return {
    call,
    get: async <T = unknown>(path: string) => await call<T>('GET', path),
    post: async <T = unknown>(path: string, body?: unknown) => await call<T>('POST', path, body)
  }
}
export type ServiceApi = ReturnType<typeof serviceApi>

export interface EmulatorStatus {
  id: string
  recipients: string[]
  chunks: number
  decrypted: boolean
  errors: string[]
  /** device JIDs that got a sender key distribution message (SKDM) in an accepted stanza */
  skdmDevices?: string[]
  /** set when a stanza under this id was NACKed */
  rejected?: { error: number, rule: string }
}

/** The emulator's JSON control API (emulator/src/control-api.ts; see emulator/README.md). */
export function emulatorApi (controlUrl: string) {
  const call = async <T = unknown>(method: string, path: string, body?: unknown): Promise<T> =>
    await request<T>(`${controlUrl}${path}`, method, {}, body)
  return {
    createAccount: async (number: string) => await call<{ number: string, lid: string }>('POST', '/accounts', { number }),
    scan: async (number: string, qr: string) => await call<{ linked: true, device: number }>('POST', `/accounts/${number}/scan`, { qr }),
    /** `publishKeys`: the devices' keys made at creation, as at registration (emulator/README.md) */
    addContacts: async (count: number, prefix: string, legacy = false, publishKeys = false) =>
      await call<Array<{ number: string }>>('POST', '/contacts/bulk', { count, prefix, ...(legacy ? { legacy } : {}), ...(publishKeys ? { publishKeys } : {}) }),
    status: async (id: string) => await call<EmulatorStatus>('GET', `/statuses/${id}`),
    sendViews: async (statusId: string, viewers: string[], opts: { force?: boolean } = {}) =>
      await call<{ stanzas: number, deliveredTo: number }>('POST', `/statuses/${statusId}/views`, { viewers, type: 'read', ...opts }),
    /** stanzas the devices of these accounts were sent and have not acked yet, summed */
    unacked: async (numbers: string[]) => (await call<{ count: number }>('POST', '/unacked', { numbers })).count,
    settled: async (timeoutMs = 60_000) => await call('GET', `/settled?timeoutMs=${timeoutMs}`),
    connections: async () => await call<ConnectionLogEntry[]>('GET', '/connections')
  }
}
export type EmulatorApi = ReturnType<typeof emulatorApi>

/** A real socket.io client with the key; resolves once connected. */
export async function connectSocket (base: string, apiKey = API_KEY): Promise<Socket> {
  const socket = io(base, { path: '/socket.io/', auth: { apiKey }, transports: ['websocket'], reconnection: false })
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => { reject(new Error('socket.io connect timed out')) }, 10_000)
    socket.once('connect', () => { clearTimeout(timer); resolve() })
    socket.once('connect_error', (err) => { clearTimeout(timer); reject(err) })
  })
  return socket
}

/** Runs `fn` over `items` with at most `limit` at a time, in order of start. */
export async function mapLimit<T, R> (items: T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length)
  let next = 0
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++
      out[i] = await fn(items[i], i)
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker))
  return out
}

export interface LinkSpec { sessionId: string, number: string }

/**
 * Links sessions the way a user does: the phone account exists in the emulator, the session is
 * created by the API as a QR session, its QR is read from GET …/qr-code and the phone scans it.
 * Resolves when every session reports connected.
 */
export async function linkSessions (api: ServiceApi, emu: EmulatorApi, specs: LinkSpec[], concurrency = 6): Promise<void> {
  await mapLimit(specs, concurrency, async ({ sessionId, number }) => {
    await emu.createAccount(number)
    await api.post('/sessions', { sessionId, sessionName: sessionId, authMethod: 'qrcode' })
    const qr = await waitFor(async () => (await api.get<{ qrCode: string | null }>(`/sessions/${sessionId}/qr-code`)).qrCode, 60_000, `QR code of ${sessionId}`, 50)
    await emu.scan(number, qr)
    await waitFor(async () => (await api.get<{ connected: boolean }>(`/sessions/${sessionId}/connection-status`)).connected, 60_000, `${sessionId} to connect`, 100)
  })
}

/**
 * The most handshakes (a connection opened and not yet logged in or closed) that were under way at once among
 * these connections of the emulator's log.
 */
export function peakHandshakes (log: ConnectionLogEntry[]): number {
  const edges: Array<[number, number]> = []
  for (const c of log) {
    const end = c.loggedInAt ?? c.closedAt
    edges.push([Date.parse(c.openedAt), 1])
    if (end !== null) edges.push([Date.parse(end), -1])
  }
  // at equal times an end goes first: a login and the next opening in the same millisecond do not overlap
  edges.sort((a, b) => a[0] - b[0] || a[1] - b[1])
  let now = 0
  let peak = 0
  for (const [, d] of edges) { now += d; peak = Math.max(peak, now) }
  return peak
}

/** Sessions the service reports as connected (GET /api/stats). */
export async function connectedCount (api: ServiceApi): Promise<number> {
  return (await api.get<{ connectedSessions: number }>('/stats')).connectedSessions
}
