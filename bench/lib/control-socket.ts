/**
 * The Baileys socket of a control server (express-control.ts, plain-peer.ts): linked on the emulator the
 * way a plain Baileys app links (QR printed as `QR <code>` for the driver to scan, `OPEN` once linked),
 * reconnecting after the restart the platform asks for right after linking. It only keeps the control's
 * process carrying a linked session, as the service's does; the controls answer nothing from it but its state.
 *
 *   WA_WEBSOCKET_URL, WA_TEST_TRUST_ROOT, AUTH_DIR   all three, or no socket at all
 */
import makeWASocket, { Browsers, DisconnectReason, useMultiFileAuthState, WA_CERT_DETAILS } from '@whiskeysockets/baileys'

export type SocketState = 'open' | 'connecting' | 'close'

export interface ControlSocket {
  state: () => SocketState
  stop: () => void
}

export async function startControlSocket (env: NodeJS.ProcessEnv = process.env): Promise<ControlSocket> {
  const { WA_WEBSOCKET_URL, WA_TEST_TRUST_ROOT, AUTH_DIR } = env
  let state: SocketState = 'close'
  let stopping = false
  let stopSocket = (): void => undefined
  const handle: ControlSocket = { state: () => state, stop: () => { stopping = true; stopSocket() } }
  if (WA_WEBSOCKET_URL === undefined || WA_TEST_TRUST_ROOT === undefined || AUTH_DIR === undefined) return handle
  // test only, as in the service (WA_TEST_TRUST_ROOT): the emulator's certificate root
  WA_CERT_DETAILS.PUBLIC_KEY.set(Buffer.from(WA_TEST_TRUST_ROOT, 'base64'))
  const connect = async (): Promise<void> => {
    const { state: auth, saveCreds } = await useMultiFileAuthState(AUTH_DIR)
    state = 'connecting'
    const sock = makeWASocket({ auth, waWebSocketUrl: WA_WEBSOCKET_URL, browser: Browsers.ubuntu('Chrome'), markOnlineOnConnect: false })
    sock.ev.on('creds.update', () => { void saveCreds() })
    sock.ev.on('connection.update', ({ connection, qr, lastDisconnect }) => {
      if (qr !== undefined) process.stdout.write(`QR ${qr}\n`)
      if (connection === 'open') { state = 'open'; process.stdout.write('OPEN\n') }
      if (connection === 'close') {
        state = 'close'
        const code = (lastDisconnect?.error as { output?: { statusCode?: number } } | undefined)?.output?.statusCode
        if (code !== DisconnectReason.loggedOut && !stopping) void connect()
      }
    })
    stopSocket = () => { sock.end(undefined) }
  }
  await connect()
  return handle
}

/**
 * How both control servers run: the socket (when configured), the app on 127.0.0.1:`port` (`ready` printed
 * once listening), and on SIGTERM the socket stopped, the server closed, then `close` (its database).
 * Answers the socket (its state is the Express control's health).
 */
export async function serveControl (
  app: { listen: (port: number, host: string, ready: () => void) => { close: (done: () => void) => unknown } }, port: number, close: () => void
): Promise<ControlSocket> {
  const socket = await startControlSocket()
  const server = app.listen(port, '127.0.0.1', () => { process.stdout.write('ready\n') })
  process.on('SIGTERM', () => {
    socket.stop()
    server.close(() => { close(); process.exit(0) })
    setTimeout(() => process.exit(0), 2000).unref()
  })
  return socket
}
