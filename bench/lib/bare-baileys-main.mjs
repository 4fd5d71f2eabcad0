/* global process, fetch, console, Buffer, AbortSignal */
// The control of bench/send-many.ts: a bare Baileys 7.0.0-rc14 socket, nothing else (no database, no
// HTTP framework, auth state in memory, which is the cheapest key store Baileys can have). Plain
// JavaScript run by plain node (no tsx loader), like the compiled service. bench/lib/bare-baileys.ts
// starts it with bench/lib/stock-libsignal.mjs preloaded, so it runs the stock libsignal 6.
//   BARE_WS_URL, BARE_TRUST_ROOT  the emulator's WebSocket URL and root key (test only, as the service's
//                                 WA_WEBSOCKET_URL and WA_TEST_TRUST_ROOT)
//   BARE_CONTROL_URL, BARE_NUMBER the emulator's control API and the phone number to link
// Prints one JSON line once linked and open: { port, curveFile } (curveFile: the libsignal curve.js that
// Baileys loaded, which the driver checks is the stock file). Then POST http://127.0.0.1:<port>/send
// { text, jids } sends a text status to `jids` the way Baileys' README does, and answers { messageId }.
import { createServer } from 'node:http'
import { fileURLToPath } from 'node:url'
import makeWASocket, { Browsers, DisconnectReason, initAuthCreds, WA_CERT_DETAILS } from '@whiskeysockets/baileys'
import pino from 'pino'

const { BARE_WS_URL: wsUrl, BARE_TRUST_ROOT: trustRoot, BARE_CONTROL_URL: controlUrl, BARE_NUMBER: number } = process.env
if (!wsUrl || !trustRoot || !controlUrl || !number) throw new Error('BARE_WS_URL, BARE_TRUST_ROOT, BARE_CONTROL_URL and BARE_NUMBER are required')
WA_CERT_DETAILS.PUBLIC_KEY.set(Buffer.from(trustRoot, 'base64'))

// what Baileys itself resolves for `libsignal/src/curve.js` (through the hook when it is preloaded)
const curveFile = fileURLToPath(import.meta.resolve('libsignal/src/curve.js'))

const creds = initAuthCreds()
const store = new Map()
const keys = {
  get: async (type, ids) => Object.fromEntries(ids.map((id) => [id, store.get(`${type}:${id}`)]).filter(([, v]) => v !== undefined)),
  set: async (data) => {
    for (const [type, entries] of Object.entries(data)) {
      for (const [id, value] of Object.entries(entries)) {
        if (value === null || value === undefined) store.delete(`${type}:${id}`)
        else store.set(`${type}:${id}`, value)
      }
    }
  }
}

async function control (method, path, body) {
  const res = await fetch(`${controlUrl}${path}`, {
    method,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(30_000)
  })
  if (!res.ok) throw new Error(`${method} ${path} → ${res.status}: ${await res.text()}`)
  return await res.json()
}

// a legacy (phone-number only) account: the platform as rc14 assumes it. Stock rc14 posting from an
// LID-migrated account is NACKed 479 by the emulator (Baileys #2794), which would measure nothing
await control('POST', '/accounts', { number, legacy: true })
let sock
let scanned = false
const opened = new Promise((resolve, reject) => {
  const connect = () => {
    sock = makeWASocket({
      auth: { creds, keys },
      waWebSocketUrl: wsUrl,
      logger: pino({ level: 'silent' }),
      browser: Browsers.ubuntu('Chrome'),
      markOnlineOnConnect: false,
      syncFullHistory: false,
      shouldSyncHistoryMessage: () => false
    })
    sock.ev.on('creds.update', (update) => { Object.assign(creds, update) })
    sock.ev.on('connection.update', ({ connection, qr, lastDisconnect }) => {
      if (qr !== undefined && !scanned) {
        scanned = true
        control('POST', `/accounts/${number}/scan`, { qr }).catch(reject)
      }
      if (connection === 'open') resolve()
      if (connection === 'close') {
        const code = lastDisconnect?.error?.output?.statusCode
        // pair-success is followed by a restart request: same credentials, new socket
        if (code === DisconnectReason.restartRequired) connect()
        else reject(new Error(`bare Baileys closed: ${lastDisconnect?.error?.message ?? code}`))
      }
    })
  }
  connect()
})
await opened

const server = createServer((req, res) => {
  let body = ''
  req.on('data', (c) => { body += c })
  req.on('end', () => {
    const { text, jids } = JSON.parse(body)
    sock.sendMessage('status@broadcast', { text }, { statusJidList: jids, backgroundColor: '#FF336699', font: 0 }).then((sent) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ messageId: sent.key.id }))
    }, (err) => {
      res.writeHead(500).end(String(err?.stack ?? err))
    })
  })
})
server.listen(0, '127.0.0.1', () => {
  console.log(JSON.stringify({ port: server.address().port, curveFile }))
})
process.once('SIGTERM', () => { sock.end(undefined); server.close(); process.exit(0) })
