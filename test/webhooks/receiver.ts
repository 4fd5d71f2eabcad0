import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { TestContext } from 'node:test'
import { Webhook } from 'standardwebhooks'
import { waitFor } from '../helper.js'

// A webhook receiver on 127.0.0.1 for tests: records every request, answers as told, can stop
// listening and come back on the same port.

export interface Received {
  /** path and query the request was sent to */
  path: string
  headers: Record<string, string>
  body: string
  /** the parsed body */
  json: { type: string, timestamp: string, data: Record<string, unknown> }
  answered: number | 'hang'
  at: number
}

/** 200 (or any status code), 'hang' (never answers), or a function deciding per request. */
export type Mode = number | 'hang' | ((r: Omit<Received, 'answered'>) => number | 'hang')

export interface Receiver {
  url: string
  port: number
  mode: Mode
  /** every request, in arrival order */
  requests: Received[]
  /** requests answered 2xx */
  accepted: () => Received[]
  /** the bodies of accepted requests whose signature verifies with `secret` (throws on a bad one) */
  verified: (secret: string) => Array<Received['json']>
  /** stop listening (connections are refused) */
  down: () => Promise<void>
  /** listen again on the same port */
  up: () => Promise<void>
  waitForAccepted: (n: number, timeoutMs?: number) => Promise<Received[]>
}

export async function startReceiver (t: TestContext, mode: Mode = 200, port = 0): Promise<Receiver> {
  const requests: Received[] = []
  const hanging = new Set<ServerResponse>()
  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8')
      const headers: Record<string, string> = {}
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers[k] = v
      let json: Received['json']
      try { json = JSON.parse(body) as Received['json'] } catch { json = { type: '?', timestamp: '', data: {} } }
      const seen = { path: req.url ?? '', headers, body, json, at: Date.now() }
      const answer = typeof receiver.mode === 'function' ? receiver.mode(seen) : receiver.mode
      requests.push({ ...seen, answered: answer })
      if (answer === 'hang') { hanging.add(res); return }
      res.writeHead(answer, { 'content-type': 'text/plain' }).end(answer >= 300 ? `no thanks (${answer})` : 'ok')
    })
  }
  let server = createServer(handler)
  const listen = async (p: number): Promise<number> => {
    server = createServer(handler)
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(p, '127.0.0.1', () => { server.off('error', reject); resolve() })
    })
    return (server.address() as AddressInfo).port
  }
  const close = async (): Promise<void> => {
    for (const res of hanging) res.destroy()
    hanging.clear()
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  }
  const actualPort = await listen(port)
  let listening = true
  t.after(async () => { if (listening) await close() })

  const receiver: Receiver = {
    url: `http://127.0.0.1:${actualPort}/hook`,
    port: actualPort,
    mode,
    requests,
    accepted: () => requests.filter((r) => typeof r.answered === 'number' && r.answered >= 200 && r.answered < 300),
    verified: (secret) => {
      const wh = new Webhook(secret)
      return receiver.accepted().map((r) => wh.verify(r.body, r.headers) as Received['json'])
    },
    down: async () => { listening = false; await close() },
    up: async () => { await listen(actualPort); listening = true },
    waitForAccepted: async (n, timeoutMs = 15_000) => await waitFor(() => receiver.accepted().length >= n ? receiver.accepted() : undefined, timeoutMs, `${n} accepted webhook requests (have ${receiver.accepted().length})`)
  }
  return receiver
}
