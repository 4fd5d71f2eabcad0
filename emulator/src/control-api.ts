/** JSON-over-HTTP control API (same server as the WebSocket), mirroring the library API. */
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Emulator } from './emulator-api.js'
import { EmulatorError } from './errors.js'
import { readBody } from './media-server.js'
import type { FailDecryptOptions, FaultKind } from './types.js'
import type { BulkViewOptions, ContactStatusOptions, GroupedReceiptOptions, InteractionOptions } from './types-messages.js'

const MAX_BODY = 16 * 1024 * 1024

type Json = Record<string, unknown>
type Handler = (emulator: Emulator, params: string[], body: Json, query: URLSearchParams) => Promise<[number, unknown]> | [number, unknown]

interface Route {
  method: 'GET' | 'POST' | 'PUT'
  pattern: RegExp
  handler: Handler
}

const SEGMENT = '([^/]+)'

const routes: Route[] = [
  {
    method: 'GET',
    pattern: /^\/(?:health)?$/,
    handler: (emulator) => [
      200,
      {
        ok: true, wsUrl: emulator.wsUrl, controlUrl: emulator.controlUrl, mediaUrl: emulator.mediaUrl,
        rootPublicKey: emulator.rootPublicKey, caFile: emulator.caFile
      }
    ]
  },
  { method: 'POST', pattern: /^\/accounts$/, handler: (e, _, body) => [201, e.createAccount(body.number as string, { legacy: optionalBoolean(body, 'legacy') })] },
  { method: 'GET', pattern: new RegExp(`^/accounts/${SEGMENT}$`), handler: (e, [number]) => [200, e.getAccount(number)] },
  { method: 'GET', pattern: new RegExp(`^/accounts/${SEGMENT}/unacked$`), handler: (e, [number]) => [200, { count: e.unackedCount(number) }] },
  // the same summed over many accounts in one call (a benchmark's fleet of a thousand polls it)
  {
    method: 'POST',
    pattern: /^\/unacked$/,
    handler: (e, _, body) => {
      const numbers = body.numbers
      if (!Array.isArray(numbers) || numbers.some((n) => typeof n !== 'string')) throw new EmulatorError(400, 'numbers (array of strings) is required')
      return [200, { count: (numbers as string[]).reduce((sum, n) => sum + e.unackedCount(n), 0) }]
    }
  },
  { method: 'GET', pattern: new RegExp(`^/accounts/${SEGMENT}/acks$`), handler: (e, [number]) => [200, e.ackStats(number)] },
  { method: 'GET', pattern: /^\/replaced-logins$/, handler: (e) => [200, e.replacedLogins()] },
  {
    method: 'POST',
    pattern: new RegExp(`^/accounts/${SEGMENT}/scan$`),
    handler: async (e, [number], body) => [200, await e.scan(number, requireString(body, 'qr'))]
  },
  {
    method: 'POST',
    pattern: new RegExp(`^/accounts/${SEGMENT}/enter-code$`),
    handler: async (e, [number], body) => [200, await e.enterCode(number, requireString(body, 'code'))]
  },
  {
    method: 'POST',
    pattern: new RegExp(`^/accounts/${SEGMENT}/faults$`),
    handler: (e, [number], body) => {
      e.fault(number, requireString(body, 'kind') as FaultKind)
      return [200, { ok: true }]
    }
  },
  // what the server announces (notices.ts)
  { method: 'POST', pattern: new RegExp(`^/accounts/${SEGMENT}/client-expiration$`), handler: (e, [number], body) => [200, e.announceClientExpiration(number, { t: body.t as number })] },
  { method: 'POST', pattern: new RegExp(`^/contacts/${SEGMENT}/change-lid$`), handler: (e, [number]) => [200, e.changeLid(number)] },
  {
    method: 'POST',
    pattern: new RegExp(`^/accounts/${SEGMENT}/refresh-lid-ack$`),
    handler: (e, [number], body) => [200, e.sendRefreshLidAck(number, { from: requireString(body, 'from'), ...(typeof body.id === 'string' ? { id: body.id } : {}) })]
  },
  {
    method: 'POST',
    pattern: new RegExp(`^/accounts/${SEGMENT}/refuse-statuses$`),
    handler: (e, [number], body) => [200, e.refuseStatuses(number, { error: body.error as number, count: optionalNumber(body, 'count'), after: optionalNumber(body, 'after') })]
  },
  // the phone's address book and status privacy (phone.ts): linked devices learn them through app-state sync;
  // the bodies as given (the emulator's methods check them, for this API and in-process callers alike)
  {
    method: 'PUT',
    pattern: new RegExp(`^/accounts/${SEGMENT}/saved-contacts$`),
    handler: async (e, [number], body) => [200, await e.setSavedContacts(number, body.contacts as Parameters<Emulator['setSavedContacts']>[1])]
  },
  { method: 'GET', pattern: new RegExp(`^/accounts/${SEGMENT}/saved-contacts$`), handler: (e, [number]) => [200, { contacts: e.savedContacts(number) }] },
  {
    method: 'PUT',
    pattern: new RegExp(`^/accounts/${SEGMENT}/status-privacy$`),
    handler: async (e, [number], body) => [200, await e.setStatusPrivacy(number, body as unknown as Parameters<Emulator['setStatusPrivacy']>[1])]
  },
  { method: 'GET', pattern: new RegExp(`^/accounts/${SEGMENT}/status-privacy$`), handler: (e, [number]) => [200, e.statusPrivacy(number)] },
  // contacts' statuses (contact-statuses.ts): delivered as `<status>` stanzas, owed an `<ack class="status">`
  {
    method: 'POST',
    pattern: new RegExp(`^/accounts/${SEGMENT}/contact-statuses$`),
    handler: async (e, [number], body) => [200, await e.postContactStatus(number, body as unknown as ContactStatusOptions)]
  },
  { method: 'GET', pattern: new RegExp(`^/accounts/${SEGMENT}/contact-statuses$`), handler: (e, [number]) => [200, e.contactStatusLog(number)] },
  // what a contact's devices decrypted of the one-to-one messages accounts sent them (status mention notices: status-mentions.ts)
  { method: 'GET', pattern: new RegExp(`^/contacts/${SEGMENT}/messages$`), handler: (e, [number]) => [200, { messages: e.directMessages(number) }] },
  // what the account sent its contacts (sent-to-contacts.ts): likes of their statuses and 1:1 messages, as each device read them
  { method: 'GET', pattern: new RegExp(`^/accounts/${SEGMENT}/sent-to-contacts$`), handler: (e, [number]) => [200, { sent: e.sentToContacts(number) }] },
  {
    method: 'PUT',
    pattern: /^\/settings\/status-ack-deadline$/,
    handler: (e, _, body) => {
      const ms = optionalNumber(body, 'ms')
      if (ms === undefined) throw new EmulatorError(400, 'ms (number) is required')
      e.setStatusAckDeadline(ms)
      return [200, { ms }]
    }
  },
  {
    method: 'POST',
    pattern: /^\/contacts$/,
    handler: (e, _, body) => [201, e.addContact({ number: body.number as string, devices: optionalNumber(body, 'devices'), legacy: optionalBoolean(body, 'legacy') })]
  },
  {
    method: 'POST',
    pattern: /^\/contacts\/bulk$/,
    handler: (e, _, body) => {
      const count = optionalNumber(body, 'count')
      if (count === undefined) throw new EmulatorError(400, 'count is required')
      const prefix = body.prefix === undefined ? undefined : requireString(body, 'prefix')
      return [201, e.addContacts(count, { devices: optionalNumber(body, 'devices'), prefix, legacy: optionalBoolean(body, 'legacy'), publishKeys: optionalBoolean(body, 'publishKeys') })]
    }
  },
  { method: 'GET', pattern: new RegExp(`^/contacts/${SEGMENT}$`), handler: (e, [number]) => [200, e.getContact(number)] },
  { method: 'POST', pattern: new RegExp(`^/contacts/${SEGMENT}/devices$`), handler: (e, [number]) => [201, e.addContactDevice(number)] },
  {
    method: 'POST',
    pattern: new RegExp(`^/contacts/${SEGMENT}/fail-decrypt$`),
    handler: (e, [number], body) => [200, e.failNextDecrypt(number, {
      device: optionalNumber(body, 'device'),
      statuses: optionalNumber(body, 'statuses'),
      times: optionalNumber(body, 'times'),
      via: body.via === undefined ? undefined : requireString(body, 'via') as FailDecryptOptions['via']
    })]
  },
  { method: 'POST', pattern: new RegExp(`^/accounts/${SEGMENT}/devices$`), handler: (e, [number]) => [201, e.addOwnDevice(number)] },
  {
    method: 'POST',
    pattern: new RegExp(`^/contacts/${SEGMENT}/reveal-lid$`),
    handler: (e, [number], body) => [200, e.revealLid(number, { to: requireString(body, 'to') })]
  },
  { method: 'GET', pattern: /^\/statuses$/, handler: (e) => [200, e.statuses()] },
  { method: 'GET', pattern: new RegExp(`^/statuses/${SEGMENT}$`), handler: (e, [id]) => [200, e.status(id)] },
  {
    method: 'POST',
    pattern: new RegExp(`^/statuses/${SEGMENT}/views$`),
    handler: async (e, [id], body) => {
      const viewers = body.viewers ?? (body.viewer === undefined ? undefined : [body.viewer])
      if (!Array.isArray(viewers)) throw new EmulatorError(400, 'viewer (string) or viewers (array) is required')
      const options: BulkViewOptions = {
        viewers: viewers.map((v) => String(v)),
        type: body.type as BulkViewOptions['type'],
        via: body.via as BulkViewOptions['via'],
        grouped: body.grouped === true,
        alsoStatusIds: body.alsoStatusIds as string[] | undefined,
        force: body.force === true,
        participantPn: optionalBoolean(body, 'participantPn'),
        featureIncapable: optionalBoolean(body, 'featureIncapable')
      }
      return [200, await e.sendViews(id, options)]
    }
  },
  {
    method: 'POST',
    pattern: new RegExp(`^/statuses/${SEGMENT}/retry$`),
    handler: (e, [id], body) => [200, e.requestStatusRetry(id, {
      number: requireString(body, 'number'),
      device: optionalNumber(body, 'device'),
      via: body.via === undefined ? undefined : requireString(body, 'via') as FailDecryptOptions['via']
    })]
  },
  {
    method: 'POST',
    pattern: new RegExp(`^/statuses/${SEGMENT}/grouped-receipts$`),
    handler: async (e, [id], body) => [200, await e.sendGroupedReceipts(id, body as unknown as GroupedReceiptOptions)]
  },
  {
    method: 'POST',
    pattern: new RegExp(`^/statuses/${SEGMENT}/reactions$`),
    handler: async (e, [id], body) => [200, await e.react(id, body as unknown as InteractionOptions)]
  },
  {
    method: 'POST',
    pattern: new RegExp(`^/statuses/${SEGMENT}/replies$`),
    handler: async (e, [id], body) => [200, await e.reply(id, body as unknown as InteractionOptions)]
  },
  { method: 'GET', pattern: /^\/media$/, handler: (e) => [200, e.mediaUploads()] },
  { method: 'GET', pattern: /^\/rejected$/, handler: (e) => [200, e.rejectedMessages()] },
  { method: 'GET', pattern: /^\/connections$/, handler: (e) => [200, e.connectionLog()] },
  {
    method: 'GET',
    pattern: /^\/settled$/,
    handler: async (e, _, __, query) => {
      const timeoutMs = Number(query.get('timeoutMs') ?? 10_000)
      if (!Number.isFinite(timeoutMs) || timeoutMs <= 0 || timeoutMs > 120_000) throw new EmulatorError(400, 'timeoutMs must be 1..120000')
      await e.settled(timeoutMs)
      return [200, { ok: true }]
    }
  }
]

function requireString (body: Json, key: string): string {
  const value = body[key]
  if (typeof value !== 'string' || !value) throw new EmulatorError(400, `${key} (string) is required`)
  return value
}

function optionalNumber (body: Json, key: string): number | undefined {
  const value = body[key]
  if (value === undefined) return undefined
  if (typeof value !== 'number') throw new EmulatorError(400, `${key} must be a number`)
  return value
}

function optionalBoolean (body: Json, key: string): boolean | undefined {
  const value = body[key]
  if (value === undefined) return undefined
  if (typeof value !== 'boolean') throw new EmulatorError(400, `${key} must be a boolean`)
  return value
}

function send (res: ServerResponse, status: number, body: unknown): void {
  if (res.headersSent) return
  const text = JSON.stringify(body)
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) })
  res.end(text)
}

export async function handleControlRequest (emulator: Emulator, req: IncomingMessage, res: ServerResponse): Promise<void> {
  try {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1')
    const candidates = routes.filter((r) => r.pattern.test(url.pathname))
    if (!candidates.length) throw new EmulatorError(404, `no route ${url.pathname}`)
    const route = candidates.find((r) => r.method === req.method)
    if (!route) {
      res.setHeader('allow', candidates.map((r) => r.method).join(', '))
      send(res, 405, { error: `method ${req.method} not allowed on ${url.pathname}` })
      return
    }
    const params = (route.pattern.exec(url.pathname) ?? []).slice(1).map((p) => decodeURIComponent(p))
    let body: Json = {}
    if (req.method === 'POST' || req.method === 'PUT') {
      const raw = await readBody(req, MAX_BODY)
      if (raw.length) {
        let parsed: unknown
        try {
          parsed = JSON.parse(raw.toString('utf8'))
        } catch {
          throw new EmulatorError(400, 'body is not valid JSON')
        }
        if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new EmulatorError(400, 'body must be a JSON object')
        body = parsed as Json
      }
    }
    const [status, payload] = await route.handler(emulator, params, body, url.searchParams)
    send(res, status, payload)
  } catch (error) {
    if (error instanceof EmulatorError) {
      send(res, error.status, { error: error.message })
    } else {
      send(res, 500, { error: (error as Error).message })
    }
  }
}
