import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { startEmulator, testCertPaths, type Emulator } from '@status-tracker/emulator'
import { fromPlatform } from '../../src/errors.js'
import { startPlatform, tempDb, waConfig, type PlatformUnderTest, type TempDb } from './harness.js'
import { insertSession } from '../support/sessions.js'

// A separate file (its own process) because Baileys leaves a 30 s timer behind every pre-key upload
// (socket.js uploadPreKeys races the upload against an uncleared setTimeout), so a file's process
// exits up to 30 s after its last link; split, those tails overlap.

/** Uses the first code; if the phone was too late for it, waits for a newer one and uses that (4 tries). */
async function linkWithLatest (first: () => Promise<string>, use: (code: string) => Promise<void>, latest: () => string | undefined): Promise<void> {
  let code = await first()
  for (let attempt = 1; ; attempt++) {
    try {
      await use(code)
      return
    } catch (err) {
      if (attempt >= 4) throw err
      const deadline = Date.now() + 5000
      while (latest() === code || latest() === undefined) {
        if (Date.now() > deadline) throw err
        await new Promise((resolve) => setTimeout(resolve, 25))
      }
      code = latest() ?? code
    }
  }
}

describe('link attempts: refresh while unlinked and the link timeout', () => {
  let emu: Emulator
  let tmp: TempDb
  let p: PlatformUnderTest
  const LINK_TIMEOUT_MS = 5000

  before(async () => {
    // each socket is offered one short-lived ref, then the server closes it
    emu = await startEmulator({ tls: testCertPaths(), qr: { refs: 1, firstTtlMs: 2000, closeGraceMs: 100 } })
    tmp = await tempDb()
    p = startPlatform(tmp.db, waConfig(emu, { linkTimeoutMs: LINK_TIMEOUT_MS }))
  })

  after(async () => {
    await p.platform.close()
    await emu.stop()
    await tmp.close()
  })

  it('pushes fresh QR codes and pairing codes, stops after the link timeout, and starts again on request', async () => {
    const qrNumber = '15550002001'
    const pairNumber = '15550002002'
    emu.createAccount(qrNumber)
    emu.createAccount(pairNumber)
    await insertSession(tmp.db, 'qr-t')
    await insertSession(tmp.db, 'pair-t', { authMethod: 'pairing', phoneNumber: pairNumber })
    const started = Date.now()
    await p.platform.startSession({ sessionId: 'qr-t', authMethod: 'qrcode', phoneNumber: null })
    await p.platform.startSession({ sessionId: 'pair-t', authMethod: 'pairing', phoneNumber: pairNumber })

    const qrError = await p.events.next('qr-code-error', (e) => e.sessionId === 'qr-t', 0, LINK_TIMEOUT_MS + 5000)
    const pairError = await p.events.next('pairing-code-error', (e) => e.sessionId === 'pair-t' && /timed out/.test(e.error), 0, 5000)
    assert.ok(Date.now() - started >= LINK_TIMEOUT_MS - 100)
    assert.match(qrError.error, /^Linking timed out/)
    assert.match(pairError.error, /^Linking timed out/)
    const qrs = new Set(p.events.all('qr-code', (e) => e.sessionId === 'qr-t').map((e) => e.qrCode))
    const codes = new Set(p.events.all('pairing-code', (e) => e.sessionId === 'pair-t').map((e) => e.pairingCode))
    assert.ok(qrs.size >= 2, `fresh QR codes while unlinked (${qrs.size})`)
    assert.ok(codes.size >= 2, `fresh pairing codes while unlinked (${codes.size})`)
    for (const id of ['qr-t', 'pair-t']) {
      assert.ok(p.events.all('connection-status', (e) => e.sessionId === id && e.status === 'close' && e.reason === 'link-timeout').length === 1)
      assert.deepEqual(p.platform.snapshot(id), { sessionId: id, connected: false, status: 'close', ownNumber: null, pairingCode: null, qrCode: null })
    }
    const quiet = p.events.mark()
    await new Promise((resolve) => setTimeout(resolve, 1500))
    assert.equal(p.events.all('qr-code', () => true, quiet).length + p.events.all('pairing-code', () => true, quiet).length, 0, 'nothing after the timeout')

    // restartSession / requestPairingCode start linking again, and linking works. A code or QR may
    // expire (2 s here) before the phone uses it: then the next one pushed is used.
    const again = p.events.mark()
    const code = await p.platform.requestPairingCode('pair-t')
    await linkWithLatest(async () => code,
      async (c) => { await emu.enterCode(pairNumber, c) }, () => p.events.all('pairing-code', (e) => e.sessionId === 'pair-t', again).at(-1)?.pairingCode)
    await p.platform.restartSession('qr-t')
    await linkWithLatest(async () => (await p.events.next('qr-code', (e) => e.sessionId === 'qr-t', again)).qrCode,
      async (qr) => { await emu.scan(qrNumber, qr) }, () => p.events.all('qr-code', (e) => e.sessionId === 'qr-t', again).at(-1)?.qrCode)
    await p.events.next('connection-status', (e) => e.sessionId === 'qr-t' && e.status === 'open', again)
    await p.events.next('connection-status', (e) => e.sessionId === 'pair-t' && e.status === 'open', again)
  })
})

describe('pairing when the platform cannot be reached', () => {
  it('requestPairingCode fails with PairingUnavailable (and a pairing-code-error) instead of hanging', async () => {
    const tmp = await tempDb()
    // a port nothing listens on: every connection attempt fails and the session keeps backing off
    const wa = { websocketUrl: 'ws://127.0.0.1:9/ws/chat', version: null, testTrustRoot: null, linkTimeoutMs: 60_000, statusChunkSize: 256 }
    const p = startPlatform(tmp.db, wa, { reconnectBaseMs: 100, reconnectMaxMs: 200, pairingReadyTimeoutMs: 800, socketEndTimeoutMs: 500 })
    try {
      await insertSession(tmp.db, 'down', { authMethod: 'pairing', phoneNumber: '15550003001' })
      await p.platform.startSession({ sessionId: 'down', authMethod: 'pairing', phoneNumber: '15550003001' })
      const started = Date.now()
      // the platform's own code, and the answer the service gives for it
      await assert.rejects(p.platform.requestPairingCode('down'), (err: unknown) => {
        assert.equal((err as { code?: string }).code, 'PAIRING_UNAVAILABLE')
        const answer = fromPlatform(err) as { code?: string, statusCode?: number }
        assert.deepEqual({ code: answer.code, statusCode: answer.statusCode }, { code: 'ST_PAIRING_UNAVAILABLE', statusCode: 500 })
        return true
      })
      assert.ok(Date.now() - started < 3000)
      const error = await p.events.next('pairing-code-error', (e) => e.sessionId === 'down', 0, 1000)
      assert.match(error.error, /^Cannot generate pairing code at this time/)
      assert.ok(p.events.all('connection-status', (e) => e.sessionId === 'down' && e.status === 'close').length >= 1)
      assert.equal(p.platform.snapshot('down')?.pairingCode, null)
    } finally {
      await p.platform.close()
      await tmp.close()
    }
  })
})
