import { randomBytes } from 'node:crypto'
import { lookup as dnsLookup } from 'node:dns/promises'
import { open, unlink } from 'node:fs/promises'
import http, { type IncomingMessage } from 'node:http'
import https from 'node:https'
import { isIP, type LookupFunction } from 'node:net'
import { join } from 'node:path'
import { nonPublicRange } from '../net/address-ranges.js'
import { sniff, SNIFF_BYTES, type SniffedType } from './sniff.js'
import type { MediaKind } from './types.js'

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
export async function fetchRemoteMedia (url: URL, expected: MediaKind, opts: RemoteFetchOptions): Promise<FetchedMedia> {
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

/** `an image`, `a video`, `audio`: for messages */
function kindPhrase (kind: MediaKind): string {
  return kind === 'image' ? 'an image' : kind === 'video' ? 'a video' : 'audio'
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
      headers: { 'user-agent': 'status-tracker', accept: 'image/*, video/*;q=0.9, audio/*;q=0.9, */*;q=0.1', 'accept-encoding': 'identity' }
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
async function saveChecked (
  res: IncomingMessage, path: string, expected: MediaKind, maxBytes: number, signal: AbortSignal
): Promise<{ size: number, type: SniffedType }> {
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
        throw refused(`the content at the URL is not ${kindPhrase(expected)}${found === null ? '' : ` (it is ${found.mimeType})`}`)
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
    if (size === 0) throw refused(`the URL answered with no content, not ${kindPhrase(expected)}`)
    checkHead(true)
    return { size, type: type as unknown as SniffedType }
  } finally {
    await file.close()
  }
}
