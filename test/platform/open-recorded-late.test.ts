import assert from 'node:assert/strict'
import { test } from 'node:test'
import { startEmulator, testCertPaths } from '@status-tracker/emulator'
import type { SessionLinks } from '../../src/platform/types.js'
import { waitFor } from '../helper.js'
import { FAST_TIMING, startPlatform, tempDb, waConfig } from './harness.js'
import { insertSession } from '../support/sessions.js'

// On PostgreSQL the write that records a session open (the row, with the `open` for the event log) is
// asynchronous, and the socket can close while it runs. The recorded `open` reaches clients anyway (the
// service feeds it after the commit), so the platform must then say what the session is now, instead of
// leaving `open` standing until the next change. Here the write is held back by wrapping the session rows
// (as a locked table would hold it), through real Baileys against the emulator.

const OWN = '15550003001'
const SID = 'late-open'

test('a socket that closes while its open is being recorded: clients are told it is not open, at once', { timeout: 60_000 }, async (t) => {
  const emu = await startEmulator({ tls: testCertPaths() })
  t.after(async () => { await emu.stop() })
  const tmp = await tempDb()
  t.after(async () => { await tmp.close() })
  let hold: { opens: number, released: Promise<void> } | null = null
  const holdOpens = (rows: SessionLinks): SessionLinks => ({
    ...rows,
    markLinked: async (...args) => {
      const held = hold
      if (held !== null) { held.opens++; await held.released }
      await rows.markLinked(...args)
    }
  })
  // a long back-off: nothing but the platform's own correction can follow the late open for 10 s
  const p = startPlatform(tmp.db, waConfig(emu), { ...FAST_TIMING, reconnectBaseMs: 10_000, reconnectMaxMs: 10_000 }, holdOpens)
  t.after(async () => { await p.platform.close() })

  emu.createAccount(OWN)
  await insertSession(tmp.db, SID)
  const ofSession = (status: string) => (e: { sessionId: string, status: string }) => e.sessionId === SID && e.status === status
  await p.platform.startSession({ sessionId: SID, authMethod: 'qrcode', phoneNumber: null })
  const { qrCode } = await p.events.next('qr-code', (e) => e.sessionId === SID, 0)
  await emu.scan(OWN, qrCode)
  await p.events.next('connection-status', ofSession('open'), 0)

  // the next open's write is held; a restart (515) reconnects at once, and that socket opens
  let release = (): void => {}
  const released = new Promise<void>((resolve) => { release = resolve })
  const held = { opens: 0, released }
  hold = held
  t.after(release)
  const handedBefore = p.handed.length
  const since = p.events.mark()
  emu.fault(OWN, 'restart-required')
  await waitFor(() => held.opens > 0, 20_000, 'the reconnected socket to open and its open to be recorded')
  // it closes while the write runs: the session backs off (clients hear close)
  const dropped = p.events.mark()
  emu.fault(OWN, 'drop')
  await p.events.next('connection-status', ofSession('close'), dropped)
  const beforeRelease = p.events.mark()
  hold = null
  release()

  // the write commits with its open (what the service's log feeds to clients) ...
  const recorded = await waitFor(() => p.handed.length > handedBefore ? p.handed.at(-1) : undefined, 5000, 'the held open to be recorded')
  assert.equal(recorded.status, 'open')
  // ... and the platform says at once what the session is now: not open (nothing else can say it for 10 s)
  const correction = await p.events.next('connection-status', (e) => e.sessionId === SID, beforeRelease, 3000)
  assert.deepEqual(correction, { sessionId: SID, connected: false, status: 'close', ownNumber: null, reason: 'closed while being recorded open' })
  assert.equal(p.platform.snapshot(SID)?.connected, false)
  assert.equal(p.events.all('connection-status', ofSession('open'), since).length, 0, 'the platform itself never announced the late open')
})
