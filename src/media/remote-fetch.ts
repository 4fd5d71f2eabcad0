import { randomBytes } from 'node:crypto'
import { lookup as dnsLookup } from 'node:dns/promises'
import { open, unlink } from 'node:fs/promises'
import http, { type IncomingMessage } from 'node:http'
import https from 'node:https'
import { isIP, type LookupFunction } from 'node:net'
import { join } from 'node:path'
import { sniff, SNIFF_BYTES, type SniffedType } from './sniff.js'

// The server fetches `url` statuses' media itself, through this guard, instead of handing the URL to
// Baileys: http(s) only; every address a host resolves to is checked, and the connection goes to the
// address that was checked (no second DNS answer can swap in another: DNS rebinding); the same at every
// redirect; a size cap while streaming; connect and total timeouts; the first bytes must be the kind of
// media the URL's extension promised. The bytes land in a 0600 temporary file that the caller removes.

/** Why a URL may not be fetched (the client's URL is the problem) or why fetching it failed (the remote). */
export class RemoteFetchError extends Error {
  constructor (readonly kind: 'refused' | 'failed', message: string) {
    super(message)
    this.name = 'RemoteFetchError'
  }
}

const refused = (message: string) => new RemoteFetchError('refused', message)
const failed = (message: string) => new RemoteFetchError('failed', message)

// ---- address classification ----

type Range = [prefix: bigint, bits: number, name: string]

const v4 = (a: string, bits: number, name: string): Range => [ipv4ToInt(a), bits, name]

// Everything that is not an ordinary public unicast address.
const V4_RANGES: Range[] = [
  v4('0.0.0.0', 8, 'unspecified ("this network")'),
  v4('10.0.0.0', 8, 'private (10/8)'),
  v4('100.64.0.0', 10, 'shared (carrier-grade NAT)'),
  v4('127.0.0.0', 8, 'loopback'),
  v4('169.254.0.0', 16, 'link-local'),
  v4('172.16.0.0', 12, 'private (172.16/12)'),
  v4('192.0.0.0', 24, 'IETF protocol assignment'),
  v4('192.0.2.0', 24, 'documentation'),
  v4('192.88.99.0', 24, '6to4 relay'),
  v4('192.168.0.0', 16, 'private (192.168/16)'),
  v4('198.18.0.0', 15, 'benchmarking'),
  v4('198.51.100.0', 24, 'documentation'),
  v4('203.0.113.0', 24, 'documentation'),
  v4('224.0.0.0', 4, 'multicast'),
  v4('240.0.0.0', 4, 'reserved')
]

const v6 = (a: string, bits: number, name: string): Range => [ipv6ToBigInt(a), bits, name]

const V6_RANGES: Range[] = [
  v6('::', 128, 'unspecified'),
  v6('::1', 128, 'loopback'),
  v6('100::', 64, 'discard-only'),
  v6('2001:db8::', 32, 'documentation'),
  v6('fc00::', 7, 'unique-local'),
  v6('fe80::', 10, 'link-local'),
  v6('fec0::', 10, 'site-local'),
  v6('ff00::', 8, 'multicast')
]
// IPv6 forms that carry an IPv4 address, which is what they reach: mapped, compatible, NAT64, 6to4.
const MAPPED = ipv6ToBigInt('::ffff:0:0')
const NAT64 = ipv6ToBigInt('64:ff9b::')
const SIX_TO_FOUR = ipv6ToBigInt('2002::')

function inRange (value: bigint, width: number, [prefix, bits]: Range): boolean {
  const shift = BigInt(width - bits)
  return (value >> shift) === (prefix >> shift)
}

function ipv4ToInt (address: string): bigint {
  return address.split('.').reduce((n, part) => (n << 8n) | BigInt(Number(part)), 0n)
}

function ipv6ToBigInt (address: string): bigint {
  let text = address.toLowerCase()
  // a dotted IPv4 tail (::ffff:127.0.0.1) becomes two hextets
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text)
  if (dotted !== null) {
    const n = ipv4ToInt(dotted[1])
    text = text.slice(0, dotted.index) + `${(n >> 16n).toString(16)}:${(n & 0xffffn).toString(16)}`
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined]
  const left = head === '' ? [] : head.split(':')
  const right = tail === undefined || tail === '' ? [] : tail.split(':')
  const groups = tail === undefined ? left : [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right]
  return groups.reduce((n, g) => (n << 16n) | BigInt(Number.parseInt(g === '' ? '0' : g, 16)), 0n)
}

/** What kind of non-public address this is, or null for a public unicast address (IPv4 or IPv6 literal). */
export function nonPublicRange (address: string): string | null {
  const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '')
  const family = isIP(bare)
  if (family === 4) {
    const n = ipv4ToInt(bare)
    if (n === 0xffffffffn) return 'broadcast'
    return V4_RANGES.find((r) => inRange(n, 32, r))?.[2] ?? null
  }
  if (family !== 6) return 'not an IP address'
  const n = ipv6ToBigInt(bare)
  const embedded = (value: bigint, how: string): string | null => {
    const inner = nonPublicRange([24n, 16n, 8n, 0n].map((s) => String((value >> s) & 0xffn)).join('.'))
    return inner === null ? null : `${inner} (${how})`
  }
  if (inRange(n, 128, [MAPPED, 96, ''])) return embedded(n & 0xffffffffn, 'IPv4-mapped')
  if (inRange(n, 128, [NAT64, 96, ''])) return embedded(n & 0xffffffffn, 'NAT64')
  if (inRange(n, 128, [SIX_TO_FOUR, 16, ''])) return embedded((n >> 80n) & 0xffffffffn, '6to4')
  const named = V6_RANGES.find((r) => inRange(n, 128, r))?.[2]
  if (named !== undefined) return named
  // IPv4-compatible (::a.b.c.d, deprecated)
  if (n >> 32n === 0n) return 'IPv4-compatible'
  return null
}

// ---- fetching ----

export interface RemoteFetchOptions {
  /** where the temporary file goes (the upload folder) */
  dir: string
  maxBytes: number
  /** ALLOW_PRIVATE_URLS: development and tests only */
  allowPrivate: boolean
  connectTimeoutMs?: number
  totalTimeoutMs?: number
  maxRedirects?: number
  /** DNS resolution (tests swap it); must return every address of the name */
  resolve?: (hostname: string) => Promise<Array<{ address: string, family: number }>>
  /** overrides the address check (tests only: lets one loopback address stand for "public") */
  isRefused?: (address: string) => string | null
}

export interface FetchedMedia {
  path: string
  size: number
  type: SniffedType
  /** the URL the bytes came from, after redirects */
  finalUrl: string
  remove: () => Promise<void>
}

const REDIRECTS = new Set([301, 302, 303, 307, 308])

/** Throws a refusal when the URL's scheme is not http(s) or its host is a non-public IP literal. */
export function checkUrl (url: URL, opts: Pick<RemoteFetchOptions, 'allowPrivate' | 'isRefused'>): void {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw refused('only http and https URLs can be fetched')
  if (url.username !== '' || url.password !== '') throw refused('URLs with credentials are not fetched')
  const host = url.hostname.replace(/^\[|\]$/g, '')
  if (isIP(host) !== 0 && !opts.allowPrivate) {
    const range = (opts.isRefused ?? nonPublicRange)(host)
    if (range !== null) throw refused(`${host} is a ${range} address`)
  }
}

async function resolveChecked (url: URL, opts: RemoteFetchOptions): Promise<{ address: string, family: 4 | 6 }> {
  const host = url.hostname.replace(/^\[|\]$/g, '')
  let addresses: Array<{ address: string, family: number }>
  if (isIP(host) !== 0) {
    addresses = [{ address: host, family: isIP(host) }]
  } else {
    try {
      addresses = await (opts.resolve ?? (async (h) => await dnsLookup(h, { all: true, verbatim: true })))(host)
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code
      throw failed(code === 'ENOTFOUND' || code === 'ENODATA' ? `${host} could not be resolved` : `resolving ${host} failed (${code ?? 'error'})`)
    }
    if (addresses.length === 0) throw failed(`${host} could not be resolved`)
  }
  if (!opts.allowPrivate) {
    // every address, not just the first: the one connected to must be one that was checked
    for (const { address } of addresses) {
      const range = (opts.isRefused ?? nonPublicRange)(address)
      if (range !== null) throw refused(`${host} resolves to a ${range} address (${address})`)
    }
  }
  const first = addresses[0]
  return { address: first.address, family: first.family === 6 ? 6 : 4 }
}

/**
 * Fetches `url` into a 0600 file in `opts.dir` and checks that it is `expected` media. Throws
 * RemoteFetchError: 'refused' (scheme, address, size, content) or 'failed' (network, HTTP status, timeout).
 */
export async function fetchRemoteMedia (url: URL, expected: 'image' | 'video', opts: RemoteFetchOptions): Promise<FetchedMedia> {
  const totalMs = opts.totalTimeoutMs ?? 60_000
  const abort = new AbortController()
  const timer = setTimeout(() => { abort.abort(failed(`no complete answer within ${Math.round(totalMs / 1000)} s`)) }, totalMs)
  const path = join(opts.dir, `.remote-${randomBytes(8).toString('hex')}.part`)
  let keep = false
  try {
    let current = url
    for (let hop = 0; ; hop++) {
      checkUrl(current, opts)
      const target = await raceAbort(resolveChecked(current, opts), abort.signal)
      const res = await request(current, target, opts.connectTimeoutMs ?? 10_000, abort.signal)
      const status = res.statusCode ?? 0
      if (REDIRECTS.has(status) && res.headers.location !== undefined) {
        res.destroy()
        if (hop >= (opts.maxRedirects ?? 5)) throw failed('too many redirects')
        try { current = new URL(res.headers.location, current) } catch { throw failed('the server redirected to an invalid URL') }
        continue
      }
      if (status < 200 || status > 299) {
        res.destroy()
        throw failed(`the server answered HTTP ${status}`)
      }
      const declared = Number(res.headers['content-length'])
      if (Number.isFinite(declared) && declared > opts.maxBytes) {
        res.destroy()
        throw refused(`the media is larger than ${formatMb(opts.maxBytes)}`)
      }
      const { size, type } = await saveChecked(res, path, expected, opts.maxBytes, abort.signal)
      keep = true
      return { path, size, type, finalUrl: current.href, remove: async () => { await unlink(path).catch(() => {}) } }
    }
  } catch (err) {
    if (abort.signal.aborted && !(err instanceof RemoteFetchError)) throw abort.signal.reason as Error
    if (err instanceof RemoteFetchError) throw err
    throw failed(describeNetworkError(err))
  } finally {
    clearTimeout(timer)
    if (!keep) await unlink(path).catch(() => {})
  }
}

function formatMb (bytes: number): string {
  return `${Math.round(bytes / (1024 * 1024))} MB`
}

function describeNetworkError (err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code
  switch (code) {
    case 'ECONNREFUSED': return 'the connection was refused'
    case 'ECONNRESET': return 'the connection was reset'
    case 'EHOSTUNREACH': case 'ENETUNREACH': return 'the host is unreachable'
    case 'ETIMEDOUT': return 'the connection timed out'
    default:
      if (typeof code === 'string' && /^(ERR_TLS|CERT_|UNABLE_TO|DEPTH_ZERO|SELF_SIGNED|ERR_SSL)/.test(code)) return `TLS failed (${code})`
      return `the connection failed (${code ?? (err instanceof Error ? err.message : 'error')})`
  }
}

async function raceAbort<T> (p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) throw signal.reason as Error
  return await new Promise<T>((resolve, reject) => {
    const onAbort = () => { reject(signal.reason as Error) }
    signal.addEventListener('abort', onAbort, { once: true })
    p.then(resolve, reject).finally(() => { signal.removeEventListener('abort', onAbort) })
  })
}

/** One GET to `url`, connected to `target` (the checked address) whatever DNS would say now. */
async function request (url: URL, target: { address: string, family: 4 | 6 }, connectMs: number, signal: AbortSignal): Promise<IncomingMessage> {
  const pinned: LookupFunction = (_hostname, options, callback) => {
    if (options.all === true) (callback as unknown as (e: null, a: Array<{ address: string, family: number }>) => void)(null, [target])
    else callback(null, target.address, target.family)
  }
  const mod = url.protocol === 'https:' ? https : http
  return await new Promise((resolve, reject) => {
    const req = mod.request(url, {
      method: 'GET',
      agent: false,
      lookup: pinned,
      family: target.family,
      signal,
      headers: { 'user-agent': 'status-tracker', accept: 'image/*, video/*;q=0.9, */*;q=0.1', 'accept-encoding': 'identity' }
    })
    const connectTimer = setTimeout(() => { req.destroy(failed(`no connection within ${Math.round(connectMs / 1000)} s`)) }, connectMs)
    req.once('socket', (socket) => {
      if (!socket.connecting) clearTimeout(connectTimer)
      socket.once('connect', () => { clearTimeout(connectTimer) })
    })
    req.once('response', (res) => { clearTimeout(connectTimer); resolve(res) })
    req.once('error', (err) => { clearTimeout(connectTimer); reject(err) })
    req.once('close', () => { clearTimeout(connectTimer) })
    req.end()
  })
}

/** Streams the body into `path` (0600) while counting and sniffing it. */
async function saveChecked (res: IncomingMessage, path: string, expected: 'image' | 'video', maxBytes: number, signal: AbortSignal): Promise<{ size: number, type: SniffedType }> {
  const file = await open(path, 'wx', 0o600)
  try {
    const head: Buffer[] = []
    let headBytes = 0
    let size = 0
    let type: SniffedType | null = null
    const checkHead = (final: boolean) => {
      if (type !== null || (!final && headBytes < SNIFF_BYTES)) return
      const found = sniff(Buffer.concat(head))
      if (found === null || found.kind !== expected) {
        throw refused(`the content at the URL is not ${expected === 'image' ? 'an image' : 'a video'}${found === null ? '' : ` (it is ${found.mimeType})`}`)
      }
      type = found
    }
    try {
      for await (const chunk of res) {
        const buf = chunk as Buffer
        size += buf.length
        if (size > maxBytes) throw refused(`the media is larger than ${formatMb(maxBytes)}`)
        if (headBytes < SNIFF_BYTES) {
          const part = buf.subarray(0, SNIFF_BYTES - headBytes)
          head.push(part)
          headBytes += part.length
          checkHead(false)
        }
        await file.write(buf)
      }
    } catch (err) {
      res.destroy()
      if (signal.aborted) throw signal.reason as Error
      throw err
    }
    if (!res.complete) throw failed('the server closed the connection before the end of the media')
    if (size === 0) throw refused(`the URL answered with no content, not ${expected === 'image' ? 'an image' : 'a video'}`)
    checkHead(true)
    return { size, type: type as unknown as SniffedType }
  } finally {
    await file.close()
  }
}
