import assert from 'node:assert/strict'
import { test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { startEmulator, testCertPaths } from '@status-tracker/emulator'
import { contactStatusStore } from '../../src/db/stores/contact-statuses.js'
import type { ContactStatus, ContactStatusSink } from '../../src/platform/platform.js'
import { waitFor } from '../helper.js'
import { FAST_TIMING, startPlatform, tempDb, waConfig } from '../platform/harness.js'
import { insertSession } from '../support/sessions.js'

// Nothing acknowledged is lost: a contact's <status> stanza is acked only once its row is committed. While the
// commit is held, no ack (and no receipt) reaches the platform; a commit that fails leaves it unacked, the socket is
// ended and the platform delivers it again at the next login, where it still decrypts (the key store's writes of
// the first decryption were abandoned with the commit: baileys/status-stanza.ts), is committed and acked. A SIGKILL
// before the commit is the failed commit without the reconnect: the stanza stays unacked on the platform.

const OWN = '15550004001'
const SID = 'contact-status-commit'

test("a contact's status is acked only after its row is committed; a failed commit gets it again, decryptable", { timeout: 90_000 }, async (t) => {
  const emu = await startEmulator({ tls: testCertPaths(), statusAckDeadlineMs: 60_000 })
  t.after(async () => { await emu.stop() })
  const tmp = await tempDb()
  t.after(async () => { await tmp.close() })
  const store = contactStatusStore(tmp.db.db)
  let hold: Promise<void> | null = null
  let failNext = false
  const calls: ContactStatus[] = []
  const sink: ContactStatusSink = {
    commit: async (sessionId, s) => {
      calls.push(s)
      if (hold !== null) await hold
      if (failNext) { failNext = false; throw new Error('database unavailable') }
      await store.record(sessionId, {
        messageId: s.messageId, fromJid: s.fromJid, fromLid: s.fromLid, fromNumber: s.fromNumber, type: s.type, text: s.text, caption: s.caption,
        mimetype: s.mimetype, size: s.size, mediaRef: s.mediaRef, error: s.error, postedAt: s.postedAt
      }, Date.now())
    }
  }
  const p = startPlatform(tmp.db, waConfig(emu), FAST_TIMING, undefined, { contactStatusSink: sink })
  t.after(async () => { await p.platform.close() })
  emu.createAccount(OWN)
  const alice = emu.addContact({ number: '15550004011' })
  await insertSession(tmp.db, SID)
  await p.platform.startSession({ sessionId: SID, authMethod: 'qrcode', phoneNumber: null })
  const { qrCode } = await p.events.next('qr-code', (e) => e.sessionId === SID, 0)
  await emu.scan(OWN, qrCode)
  await p.events.next('connection-status', (e) => e.sessionId === SID && e.status === 'open', 0)
  const delivery = (id: string) => emu.contactStatusLog(OWN).statuses.find((s) => s.id === id)!

  await t.test('held commit: no ack and no receipt meanwhile; acked once committed', async () => {
    let release = (): void => {}
    hold = new Promise<void>((resolve) => { release = resolve })
    t.after(release)
    const { id } = await emu.postContactStatus(OWN, { from: alice.number, text: 'held' })
    await waitFor(() => calls.some((c) => c.messageId === id), 15_000, 'the commit to start')
    await sleep(700)
    assert.equal(delivery(id).deliveries[0].acked, false, 'not acked while the commit is held')
    assert.deepEqual(delivery(id).receipts, [])
    assert.equal(await store.find(SID, id), undefined)
    hold = null
    release()
    await waitFor(() => delivery(id).deliveries[0].acked, 15_000, 'the ack after the commit')
    assert.equal((await store.find(SID, id))?.text, 'held')
    assert.deepEqual(delivery(id).receipts.map((r) => r.type), ['delivery'])
  })

  await t.test('failed commit: unacked, reconnect, redelivered, decrypted again, committed, acked', async () => {
    failNext = true
    const since = p.events.mark()
    // a first status from a new contact: its sender key comes in a pkmsg, the strictest case to decrypt twice
    const bob = emu.addContact({ number: '15550004012' })
    const { id } = await emu.postContactStatus(OWN, { from: bob.number, text: 'comes again' })
    await p.events.next('connection-status', (e) => e.sessionId === SID && e.status !== 'open', since)
    assert.equal(delivery(id).deliveries[0].acked, false)
    await p.events.next('connection-status', (e) => e.sessionId === SID && e.status === 'open', since)
    await waitFor(() => delivery(id).deliveries[0].acked, 15_000, 'the redelivered stanza acked')
    const d = delivery(id).deliveries[0]
    assert.equal(d.redelivered, 1)
    assert.deepEqual(d.encTypes, ['pkmsg', 'skmsg'])
    const row = await store.find(SID, id)
    assert.equal(row?.type, 'text', 'the redelivered copy decrypted')
    assert.equal(row?.text, 'comes again')
    assert.deepEqual(emu.contactStatusLog(OWN).streamErrors, [])
  })

  await t.test('a stanza that cannot be decrypted: recorded as such, then acked (no delivery receipt)', async () => {
    // carol's first status reaches the device without her sender key: it cannot be read
    const carol = emu.addContact({ number: '15550004013' })
    const { id } = await emu.postContactStatus(OWN, { from: carol.number, text: 'unreadable', withoutKey: true })
    await waitFor(() => delivery(id).deliveries[0].acked, 15_000, 'the ack of the undecryptable stanza')
    const row = await store.find(SID, id)
    assert.equal(row?.type, 'undecryptable')
    assert.equal(row?.text, null)
    assert.ok((row?.error ?? '') !== '', 'the reason is kept')
    assert.deepEqual(delivery(id).deliveries[0].ack, { class: 'status', id, to: 'status@broadcast', participant: `${carol.lid}@lid`, type: 'text', from: delivery(id).deliveries[0].ack!.from })
    assert.deepEqual(delivery(id).receipts, [], 'no delivery receipt for what was not read')
    assert.deepEqual(delivery(id).deliveries[0].encTypes, ['skmsg'])
    // her next status brings the key: read as usual
    const next = await emu.postContactStatus(OWN, { from: carol.number, text: 'readable' })
    await waitFor(() => delivery(next.id).deliveries[0].acked, 15_000, 'the next one acked')
    assert.equal((await store.find(SID, next.id))?.text, 'readable')
  })
})
