import { request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { Webhook } from 'standardwebhooks'
import { AddressRefused, guardedLookup, urlProblem } from './address-guard.js'

// One webhook POST: signed by the Standard Webhooks scheme, sent with node:http(s) so the address guard
// runs on the address actually connected to, with a connect timeout and a total timeout.

export interface SendOptions {
  url: string
  secret: string
  /** the `webhook-id` header, the same on every attempt */
  messageId: string
  body: string
  allowPrivate: boolean
  connectTimeoutMs: number
  totalTimeoutMs: number
  userAgent: string
  /** aborts the attempt (shutdown) */
  signal?: AbortSignal
}

export type SendResult =
  | { ok: true, statusCode: number }
  | { ok: false, statusCode: number | null, error: string }

/** How much of a failing answer's body is kept for `lastError`. */
const ERROR_BODY_CHARS = 200

/** Signature headers for `body` at `at` (the Standard Webhooks `webhook-*` headers). */
export function signedHeaders (secret: string, messageId: string, body: string, at: Date = new Date()): Record<string, string> {
  return {
    'webhook-id': messageId,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(secret).sign(messageId, at, body)
  }
}

export async function sendWebhook (opts: SendOptions): Promise<SendResult> {
  let url: URL
  try { url = new URL(opts.url) } catch { return { ok: false, statusCode: null, error: 'invalid URL' } }
  const problem = urlProblem(url, opts.allowPrivate)
  if (problem !== null) return { ok: false, statusCode: null, error: `refused: the URL ${problem}` }

  const headers = {
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(opts.body)),
    'user-agent': opts.userAgent,
    ...signedHeaders(opts.secret, opts.messageId, opts.body)
  }
  const request = url.protocol === 'https:' ? httpsRequest : httpRequest

  if (opts.signal?.aborted === true) return { ok: false, statusCode: null, error: 'aborted: the service is shutting down' }

  return await new Promise<SendResult>((resolve) => {
    let settled = false
    const req: ClientRequest = request(url, {
      method: 'POST',
      headers,
      lookup: guardedLookup(opts.allowPrivate),
      // one connection per delivery: no pooled socket can outlive a changed DNS answer or the guard
      agent: false
    }, (res: IncomingMessage) => {
      const statusCode = res.statusCode ?? 0
      if (statusCode >= 200 && statusCode < 300) {
        res.resume()
        finish({ ok: true, statusCode })
        return
      }
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => {
        if (text.length < ERROR_BODY_CHARS) text += chunk
        else res.destroy()
      })
      const done = (): void => {
        const snippet = text.replace(/\s+/g, ' ').trim().slice(0, ERROR_BODY_CHARS)
        const reason = res.statusMessage !== undefined && res.statusMessage !== '' ? ` ${res.statusMessage}` : ''
        finish({ ok: false, statusCode, error: `HTTP ${statusCode}${reason}${snippet !== '' ? `: ${snippet}` : ''}` })
      }
      res.on('end', done)
      res.on('close', done)
      res.on('error', done)
    })
    const finish = (result: SendResult): void => {
      if (settled) return
      settled = true
      clearTimeout(total)
      clearTimeout(connect)
      opts.signal?.removeEventListener('abort', onAbort)
      resolve(result)
    }
    const fail = (error: string): void => {
      finish({ ok: false, statusCode: null, error })
      req.destroy()
    }
    const total = setTimeout(() => { fail(`no answer within ${opts.totalTimeoutMs} ms`) }, opts.totalTimeoutMs)
    const connect = setTimeout(() => { fail(`could not connect within ${opts.connectTimeoutMs} ms`) }, opts.connectTimeoutMs)
    const onAbort = (): void => { fail('aborted: the service is shutting down') }
    opts.signal?.addEventListener('abort', onAbort, { once: true })
    req.on('socket', (socket) => {
      if (!socket.connecting) { clearTimeout(connect); return }
      socket.once(url.protocol === 'https:' ? 'secureConnect' : 'connect', () => { clearTimeout(connect) })
    })
    req.on('error', (err) => { fail(describe(err)) })
    req.end(opts.body)
  })
}

function describe (err: unknown): string {
  if (err instanceof AddressRefused) return `refused: ${err.message}`
  const code = (err as NodeJS.ErrnoException).code
  switch (code) {
    case 'ECONNREFUSED': return 'connection refused'
    case 'ECONNRESET': return 'connection reset'
    case 'ENOTFOUND': case 'EAI_AGAIN': return 'the host name did not resolve'
    case 'EHOSTUNREACH': case 'ENETUNREACH': return 'host unreachable'
    case 'ETIMEDOUT': return 'connection timed out'
    // OpenSSL messages run over several lines: the first says what happened
    default: return (err instanceof Error ? err.message : String(err)).split('\n')[0].trim().slice(0, 300)
  }
}
