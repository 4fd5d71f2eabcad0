import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { resolve } from 'node:path'
import type { TestContext } from 'node:test'
import { io, type Socket } from 'socket.io-client'
import { startEmulator, testCertPaths, type Emulator, type EmulatorOptions, type StatusRecord } from '@status-tracker/emulator'
import { build, TEST_API_KEY, waitFor, type TestApp } from './helper.js'
import type { EventName, EventPayloads } from '../schemas/events.js'
import { EventRecorder } from './events.js'

// The service, real Baileys and the emulator on 127.0.0.1, plus a socket.io client recording events.

export interface Stack extends TestApp {
  emu: Emulator
  /** where the service listens (http://127.0.0.1:<port>) */
  baseUrl: string
  events: Recorder
  /**
   * creates the session as the API does (its row, in a cluster its lease) and starts it, scans its QR in the
   * emulator, waits until open; `legacy`: the emulator's account is not LID-migrated
   */
  link: (sessionId: string, number: string, options?: { legacy?: boolean }) => Promise<void>
}

/** socket.io events as a client sees them */
export class Recorder extends EventRecorder<EventPayloads> {
  constructor (readonly socket: Socket) {
    super()
    socket.onAny((event: EventName, payload: unknown) => { this.record(event, payload) })
  }

  async next<K extends EventName>(event: K, where: (p: EventPayloads[K]) => boolean = () => true, timeoutMs = 10_000): Promise<EventPayloads[K]> {
    return await this.latest(event, where, timeoutMs, `socket.io event ${event}`)
  }
}

/** Media uploads to the emulator go over HTTPS with its self-signed certificate, trusted only through NODE_EXTRA_CA_CERTS. */
export function mediaTrusted (): boolean {
  const ca = process.env.NODE_EXTRA_CA_CERTS
  return ca !== undefined && resolve(ca) === testCertPaths().certFile
}

export async function startStack (t: TestContext, env: Record<string, string> = {}, emulator: Partial<EmulatorOptions> = {}): Promise<Stack> {
  const emu = await startEmulator({ tls: testCertPaths(), ...emulator })
  t.after(async () => { await emu.stop() })
  const app = await build(t, { WA_WEBSOCKET_URL: emu.wsUrl, WA_TEST_TRUST_ROOT: emu.rootPublicKey, ...env })
  const base = await app.listen()
  const socket = io(base, { path: '/socket.io/', auth: { apiKey: TEST_API_KEY }, transports: ['websocket'], reconnection: false })
  t.after(() => { socket.close() })
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => { reject(new Error('socket.io connect timed out')) }, 5000)
    socket.once('connect', () => { clearTimeout(timer); resolve() })
    socket.once('connect_error', (err) => { clearTimeout(timer); reject(err) })
  })

  function accountExists (number: string): boolean {
    try {
      emu.getAccount(number)
      return true
    } catch {
      return false
    }
  }

  async function link (sessionId: string, number: string, options: { legacy?: boolean } = {}): Promise<void> {
    // an account a test made beforehand (e.g. with devices of its own) is linked as it is
    if (!accountExists(number)) emu.createAccount(number, options)
    // as POST /api/sessions makes it: on PostgreSQL the node's lease is stored with the row. A row without one
    // is an orphan the cluster's next round takes over and starts again: after a logout that start linked the
    // session anew (the logout test in test/events/in-transaction.test.ts, under load)
    await app.app.sessions.create({ sessionId, sessionName: sessionId, authMethod: 'qrcode', phoneNumber: null })
    const qr = await waitFor(() => app.app.platform.snapshot(sessionId)?.qrCode, 15_000, `QR code of ${sessionId}`)
    await emu.scan(number, qr)
    await waitFor(() => app.app.platform.snapshot(sessionId)?.connected, 30_000, `${sessionId} to connect`)
  }

  return { ...app, emu, baseUrl: base, events: new Recorder(socket), link }
}

/** A tiny HTTP server on 127.0.0.1 answering fixed bodies by path. */
export async function serveFiles (
  t: TestContext, files: Record<string, { type: string, body: Buffer | string }>
): Promise<{ url: (path: string) => string, hits: string[] }> {
  const hits: string[] = []
  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://127.0.0.1').pathname
    hits.push(path)
    const file = files[path]
    if (file === undefined) { res.writeHead(404).end(); return }
    res.writeHead(200, { 'content-type': file.type }).end(file.body)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(async () => {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  })
  const { port } = server.address() as AddressInfo
  return { url: (path) => `http://127.0.0.1:${port}${path}`, hits }
}

/** A post as the emulator recorded it, once every stanza was read and every addressed device decrypted it (or failed to). */
export async function settledPost (s: Stack, id: string): Promise<StatusRecord> {
  await s.emu.waitForStatus((r) => r.id === id && r.decrypted, 15_000)
  await s.emu.settled()
  return s.emu.status(id)
}
