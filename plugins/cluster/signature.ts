import { createHmac, hash, randomBytes, timingSafeEqual } from 'node:crypto'
import type { IncomingHttpHeaders } from 'node:http'

// Node-to-node forwarding is authenticated with the cluster's own secret (CLUSTER_SECRET, or the one stored
// in the shared database), never with the caller's API key: the forwarding node checked the caller's key
// itself and passes on only its decision (the grant), signed. The signature (HMAC-SHA256) covers the sender,
// the time, a one-time nonce, the grant, the method, the path with its query and the body's SHA-256, so a
// captured request cannot be replayed (nonce, 60 s window) nor changed in any of those.

export const FORWARD = {
  /** the forwarding node's id; its presence makes the request a forwarded one (answered here, never passed on) */
  by: 'x-status-tracker-forwarded-by',
  at: 'x-status-tracker-forward-at',
  nonce: 'x-status-tracker-forward-nonce',
  /** who the caller is, as the forwarding node decided it from the caller's key: `admin` or `key:<scoped key id>` */
  grant: 'x-status-tracker-forward-grant',
  /** hex SHA-256 of the JSON body sent, or empty */
  body: 'x-status-tracker-forward-body',
  signature: 'x-status-tracker-forward-signature'
} as const

/** a grant: the admin key, or a scoped key by its id (the owner reads the key's sessions and scopes itself) */
export const GRANT_FORMAT = /^(admin|key:[0-9a-f]{16})$/
export const WINDOW_MS = 60_000

export interface ForwardParts { by: string, at: string, nonce: string, grant: string, method: string, url: string, body: string }

export function bodyDigest (body: string | undefined): string {
  return body === undefined ? '' : hash('sha256', body, 'hex')
}

export function sign (secret: string, p: ForwardParts): string {
  return createHmac('sha256', secret).update([p.by, p.at, p.nonce, p.grant, p.method, p.url, p.body].join('\n')).digest('base64url')
}

/** The headers a forwarded request carries, for a body already serialised (or none). */
export function forwardHeaders (
  secret: string, by: string, grant: string, method: string, url: string, body: string | undefined, now = Date.now()
): Record<string, string> {
  const parts: ForwardParts = { by, at: String(now), nonce: randomBytes(16).toString('base64url'), grant, method, url, body: bodyDigest(body) }
  return {
    [FORWARD.by]: parts.by,
    [FORWARD.at]: parts.at,
    [FORWARD.nonce]: parts.nonce,
    [FORWARD.grant]: parts.grant,
    [FORWARD.body]: parts.body,
    [FORWARD.signature]: sign(secret, parts)
  }
}

export const isForwarded = (headers: IncomingHttpHeaders): boolean => headers[FORWARD.by] !== undefined

const one = (headers: IncomingHttpHeaders, name: string): string | undefined => {
  const v = headers[name]
  return typeof v === 'string' ? v : undefined
}

/**
 * Checks forwarded requests: `check` is pure (the rate limit's allow-list asks it), `accept` also spends the
 * nonce, so each signed request is accepted once. Both answer null when valid, else why not.
 */
export class ForwardVerifier {
  private readonly seen = new Map<string, number>()

  constructor (private readonly secret: string | null, private readonly windowMs = WINDOW_MS) {}

  check (headers: IncomingHttpHeaders, method: string, url: string, now = Date.now()): string | null {
    if (this.secret === null) return 'this node is not in cluster mode'
    const p = {
      by: one(headers, FORWARD.by),
      at: one(headers, FORWARD.at),
      nonce: one(headers, FORWARD.nonce),
      grant: one(headers, FORWARD.grant),
      body: one(headers, FORWARD.body) ?? ''
    }
    const signature = one(headers, FORWARD.signature)
    if (p.by === undefined || p.at === undefined || p.nonce === undefined || p.grant === undefined || signature === undefined) return 'incomplete forwarding headers'
    const expected = Buffer.from(sign(this.secret, { by: p.by, at: p.at, nonce: p.nonce, grant: p.grant, method, url, body: p.body }))
    const given = Buffer.from(signature)
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return 'bad signature (a different CLUSTER_SECRET?)'
    if (!GRANT_FORMAT.test(p.grant)) return `unknown grant ${p.grant}`
    const at = Number(p.at)
    if (!Number.isFinite(at) || Math.abs(now - at) > this.windowMs) return 'signed too long ago (or the clocks differ by more than a minute)'
    if (this.seen.has(p.nonce)) return 'replayed'
    return null
  }

  accept (headers: IncomingHttpHeaders, method: string, url: string, now = Date.now()): string | null {
    const why = this.check(headers, method, url, now)
    if (why !== null) return why
    this.seen.set(one(headers, FORWARD.nonce) ?? '', now)
    // nonces older than the window cannot be replayed anyway: forget them (bounded by the request rate)
    if (this.seen.size > 1000) for (const [n, t] of this.seen) if (now - t > this.windowMs) this.seen.delete(n)
    return null
  }

  /** the parsed JSON body (serialised again: the sender sent JSON.stringify of its parsed body) matches the signed digest */
  bodyMatches (headers: IncomingHttpHeaders, body: unknown): boolean {
    const sent = body === undefined || body === null ? undefined : JSON.stringify(body)
    return bodyDigest(sent) === (one(headers, FORWARD.body) ?? '')
  }
}
