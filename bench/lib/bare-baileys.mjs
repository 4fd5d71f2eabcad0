/* global Buffer, console, process, setTimeout */
// The control of the receipt benchmarks: stock Baileys 7.0.0-rc14 and nothing else, as a user of the
// library would run it: makeWASocket with useMultiFileAuthState, its own receipt handling and ack, and
// a count of the views it reports (`message-receipt.update`). No database, no HTTP, no socket.io.
// One process holds one socket (bench/receipts.ts) or a fleet of them (bench/scale-fleet.ts), each with
// its own auth folder, doing nothing once open but what it is told.
// Plain JavaScript run without tsx's loader, like the compiled service, so neither pays for a loader.
//
//   env BARE_WS_URL   the emulator's WebSocket URL
//       BARE_ROOT     the emulator's root public key (base64): pinned like the service's WA_TEST_TRUST_ROOT
//       BARE_AUTH     a folder for the auth states (one subfolder per socket)
// stdin, one JSON object a line: { open: id } starts socket `id` (it then says { id, qr }: scan it, and
// { id, open: true }; { id, closed: code } when it closed: it reconnects unless logged out);
// { send: { id, text, to: [digits] } } sends a status from it ({ id, sent: messageId });
// { expect: n } asks for { reached: n, at } once n distinct views (status, viewer) were reported in all.
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { DisconnectReason, makeWASocket, useMultiFileAuthState, WA_CERT_DETAILS } from '@whiskeysockets/baileys'
import { pino } from 'pino'

const root = Buffer.from(process.env.BARE_ROOT ?? '', 'base64')
if (root.length !== WA_CERT_DETAILS.PUBLIC_KEY.length) throw new Error('BARE_ROOT must be the emulator root public key')
WA_CERT_DETAILS.PUBLIC_KEY.set(root)
const logger = pino({ level: 'silent' })
const say = (o) => { process.stdout.write(`${JSON.stringify(o)}\n`) }
// stdout carries this program's JSON lines only: what libraries print (libsignal's session dumps through
// console.info / console.log) goes to stderr, the driver's log
for (const level of ['log', 'info', 'debug', 'warn']) console[level] = (...args) => { process.stderr.write(`${args.map(String).join(' ')}\n`) }

const views = new Set()
let expect = Infinity
/** id → its current socket */
const sockets = new Map()
let stopping = false

async function open (id) {
  const { state, saveCreds } = await useMultiFileAuthState(join(process.env.BARE_AUTH ?? '', id))
  const connect = () => {
    const sock = makeWASocket({
      auth: state,
      waWebSocketUrl: process.env.BARE_WS_URL,
      logger,
      markOnlineOnConnect: false,
      syncFullHistory: false,
      shouldSyncHistoryMessage: () => false
    })
    sockets.set(id, sock)
    sock.ev.on('creds.update', saveCreds)
    sock.ev.on('connection.update', ({ connection, qr, lastDisconnect }) => {
      if (qr !== undefined) say({ id, qr })
      if (connection === 'open') say({ id, open: true })
      if (connection === 'close') {
        const code = lastDisconnect?.error?.output?.statusCode
        // after the scan the server asks for a restart with the new credentials; anything but a logout
        // (e.g. 408, a keep-alive missed while the process was busy) is reconnected, as Baileys' example does
        if (code === DisconnectReason.restartRequired) connect()
        else {
          say({ id, closed: code ?? null })
          if (code !== DisconnectReason.loggedOut && !stopping) connect()
        }
      }
    })
    sock.ev.on('message-receipt.update', (updates) => {
      for (const { key, receipt } of updates) {
        if (key.remoteJid === 'status@broadcast' && receipt.readTimestamp !== undefined) views.add(`${key.id}\n${receipt.userJid}`)
      }
      check()
    })
    // receipts for a message still in Baileys' event buffer (e.g. the status just sent) are merged into
    // its messages.upsert instead
    sock.ev.on('messages.upsert', ({ messages }) => {
      for (const msg of messages) {
        if (msg.key.remoteJid !== 'status@broadcast') continue
        for (const r of msg.userReceipt ?? []) if (r.readTimestamp != null) views.add(`${msg.key.id}\n${r.userJid}`)
      }
      check()
    })
  }
  connect()
}

function check () {
  if (views.size < expect) return
  say({ reached: expect, at: Date.now() })
  expect = Infinity
}

createInterface({ input: process.stdin }).on('line', (line) => {
  const cmd = JSON.parse(line)
  if (cmd.expect !== undefined) { expect = cmd.expect; check() }
  if (cmd.open !== undefined) open(String(cmd.open)).catch((err) => { say({ id: cmd.open, error: String(err) }) })
  if (cmd.send !== undefined) {
    const { id, text, to } = cmd.send
    sockets.get(id).sendMessage('status@broadcast', { text }, { statusJidList: to.map((n) => `${n}@s.whatsapp.net`) })
      .then((msg) => { say({ id, sent: msg.key.id }) }, (err) => { say({ id, error: String(err) }) })
  }
})
process.once('SIGTERM', () => {
  stopping = true
  for (const sock of sockets.values()) sock.end(undefined)
  setTimeout(() => process.exit(0), 200)
})
