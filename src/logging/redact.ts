/** what the request serializer reads (Fastify's request has these; the core does not import Fastify) */
interface LoggedRequest {
  method: string
  url: string
  ip: string
  host?: string
  headers?: Record<string, string | string[] | undefined>
  socket?: { remotePort?: number }
}

// Keys must never reach the log: not from headers (pino's `redact` in buildApp), not from query strings
// (the request serializer below), not from what dependencies print (console-guard.ts).

export const REDACTED = '[Redacted]'

/** Query parameters whose values are credentials, compared case-insensitively. */
const SECRET_PARAMS = new Set(['apikey', 'api_key', 'api-key', 'key', 'token', 'access_token'])

/** The URL with the values of credential query parameters replaced; the rest is kept as written. */
export function redactUrl (url: string): string {
  const q = url.indexOf('?')
  if (q === -1) return url
  const hash = url.indexOf('#', q)
  const query = url.slice(q + 1, hash === -1 ? undefined : hash)
  const redacted = query.split('&').map((pair) => {
    const eq = pair.indexOf('=')
    const rawName = eq === -1 ? pair : pair.slice(0, eq)
    let name = rawName
    try { name = decodeURIComponent(rawName.replaceAll('+', ' ')) } catch { /* keep as written */ }
    return SECRET_PARAMS.has(name.trim().toLowerCase()) ? `${rawName}=${REDACTED}` : pair
  }).join('&')
  return `${url.slice(0, q + 1)}${redacted}${hash === -1 ? '' : url.slice(hash)}`
}

/** Fastify's own request serializer, with the URL's credentials redacted. */
export function requestSerializer (req: LoggedRequest): Record<string, unknown> {
  return {
    method: req.method,
    url: redactUrl(req.url),
    version: req.headers?.['accept-version'],
    host: req.host,
    remoteAddress: req.ip,
    remotePort: req.socket?.remotePort
  }
}

// Property names that hold key material in what libraries print (libsignal sessions: privKey, rootKey,
// chainKey.key, baseKey, …; Baileys creds: noiseKey.private, signedIdentityKey, …).
const SECRET_NAME = /priv|secret|root|chain|key|seed|mac|cipher|token|password|auth|cred/i
// A bare base64 / hex run this long is treated as a key whatever its name.
const KEY_LIKE = /^[A-Za-z0-9+/_-]{40,}={0,2}$|^(?:[0-9a-f]{2}[ :]?){20,}$/i

/**
 * A log-safe copy of anything a library passed to console.*: binary → its length only, values under
 * key-ish names and key-like strings → [Redacted], depth and size bounded, cycles cut.
 */
export function redactValue (value: unknown, depth = 0, seen = new WeakSet<object>()): unknown {
  if (typeof value === 'string') return KEY_LIKE.test(value) ? REDACTED : value.length > 500 ? `${value.slice(0, 500)}…` : value
  if (typeof value === 'bigint') return String(value)
  if (typeof value === 'function' || typeof value === 'symbol') return `[${typeof value}]`
  if (typeof value !== 'object' || value === null) return value
  if (ArrayBuffer.isView(value) || value instanceof ArrayBuffer) return `[binary ${value.byteLength} bytes]`
  if (value instanceof Error) return { type: value.name, message: redactValue(value.message, depth + 1, seen) }
  if (seen.has(value)) return '[Circular]'
  if (depth >= 4) return '[Object]'
  seen.add(value)
  if (Array.isArray(value)) return value.slice(0, 20).map((v) => redactValue(v, depth + 1, seen))
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(value).slice(0, 40)) {
    out[k] = SECRET_NAME.test(k) && v !== null && v !== undefined && typeof v !== 'number' && typeof v !== 'boolean' ? REDACTED : redactValue(v, depth + 1, seen)
  }
  return out
}
