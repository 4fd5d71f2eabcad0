import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { startEmulator, testCertPaths, type Emulator } from '@status-tracker/emulator'
import { startPlatform, tempDb, waConfig, type PlatformUnderTest, type TempDb } from './harness.js'
import { insertSession } from '../support/sessions.js'
import { waitFor } from '../support/wait.js'

// Receipts that arrive together are committed together, and none of them is acknowledged before that
// commit: real Baileys against the emulator, whose ack ledger says which stanzas were acked. The same
// holds for the grouped form (tulir/whatsmeow #1270: several viewers per stanza, a type each).

const OWN = '15550003001'
const SID = 'turns'
const BURST = 200

describe('status receipts committed per event-loop turn', () => {
  let emu: Emulator
  let tmp: TempDb
  let p: PlatformUnderTest
  let statusId: string
  let contacts: string[]
  const acked = (): number => emu.ackStats(OWN).reduce((n, c) => n + c.acked, 0)
  const viewersSince = (since: number): Set<string> => new Set(p.sink.views(SID, since).map((v) => `${v.messageId}|${v.viewerNumber}`))

  before(async () => {
    emu = await startEmulator({ tls: testCertPaths() })
    tmp = await tempDb()
    p = startPlatform(tmp.db, waConfig(emu))
    emu.createAccount(OWN)
    await insertSession(tmp.db, SID)
    const since = p.events.mark()
    await p.platform.startSession({ sessionId: SID, authMethod: 'qrcode', phoneNumber: null })
    const { qrCode } = await p.events.next('qr-code', (e) => e.sessionId === SID, since)
    await emu.scan(OWN, qrCode)
    await p.events.next('connection-status', (e) => e.sessionId === SID && e.status === 'open', since)
    contacts = emu.addContacts(BURST, { prefix: '4475' }).map((c) => c.number)
    statusId = p.platform.newMessageId(SID)
    await p.platform.sendStatus(SID, { messageId: statusId, content: { kind: 'text', text: 'turns' }, recipients: contacts.slice(0, 2) })
    await emu.waitForStatus((s) => s.id === statusId)
    await emu.settled()
  })

  after(async () => {
    await p.platform.close()
    await emu.stop()
    await tmp.close()
  })

  it('a burst is a few commits, and no stanza is acked until the commit of its turn resolved', async () => {
    let release = (): void => undefined
    p.sink.holdWith = new Promise<void>((resolve) => { release = resolve })
    const since = p.sink.commits.length
    const ackedBefore = acked()
    assert.equal(emu.unackedCount(OWN), 0)

    await emu.sendViews(statusId, { viewers: contacts, force: true })
    await waitFor(() => viewersSince(since).size === BURST, 15_000, 'every view handed to the sink', 10)
    const commits = p.sink.commits.length - since
    assert.ok(commits < BURST / 4, `${BURST} stanzas arriving together share commits (${commits} commits)`)
    // every commit is still pending: Baileys has not seen one of the stanzas, so none is acked
    await new Promise((resolve) => setTimeout(resolve, 300))
    assert.equal(acked() - ackedBefore, 0, 'nothing acked before its commit resolved')
    assert.equal(emu.unackedCount(OWN), BURST)

    p.sink.holdWith = null
    release()
    await waitFor(() => emu.unackedCount(OWN) === 0, 15_000, 'every stanza acked after the commits', 10)
    assert.equal(acked() - ackedBefore, BURST, 'each stanza acked once')
  })

  it('a turn whose commit throws leaves all its stanzas unacked; they come again and are committed and acked once', async () => {
    const since = p.sink.commits.length
    const ackedBefore = acked()
    const mark = p.events.mark()
    p.sink.failNext = 1
    await emu.sendViews(statusId, { viewers: contacts.slice(0, 50), type: 'played', force: true })
    await p.events.next('connection-status', (e) => e.sessionId === SID && e.status === 'close', mark)
    assert.ok(emu.unackedCount(OWN) > 0, 'the refused stanzas are not acked')
    await p.events.next('connection-status', (e) => e.sessionId === SID && e.status === 'open', mark)
    await waitFor(() => viewersSince(since).size === 50 && emu.unackedCount(OWN) === 0, 15_000, 'the redelivered stanzas committed and acked', 10)
    assert.equal(acked() - ackedBefore, 50, 'each stanza acked once, after a commit')
    assert.ok(p.sink.views(SID, since).every((v) => v.type === 'played'))
  })

  it('grouped receipts: views under the status id with their own types, held until their commit; deliveries are no views; participant_pn is learned', async () => {
    const [d, r, pl, anon, onlyDelivered] = emu.addContacts(5, { prefix: '4476' })
    let release = (): void => undefined
    p.sink.holdWith = new Promise<void>((resolve) => { release = resolve })
    const since = p.sink.commits.length
    const mark = p.events.mark()
    const ackedBefore = acked()

    // two mixed stanzas, and one of deliveries only (Baileys handles and acks that one as it came)
    const mixed = await emu.sendGroupedReceipts(statusId, {
      viewers: [{ viewer: d.number, type: 'delivery' }, { viewer: r.number, type: 'read', participantPn: true }, { viewer: pl.number, type: 'played' }, { viewer: anon.number, type: 'read' }],
      perStanza: 2,
      force: true
    })
    assert.equal(mixed.ids.length, 2)
    await emu.sendGroupedReceipts(statusId, { viewers: [onlyDelivered.number], type: 'delivery', force: true })
    await waitFor(() => p.sink.views(SID, since).length === 3, 15_000, 'the grouped views handed to the sink', 10)
    await waitFor(() => acked() - ackedBefore === 1, 15_000, 'the deliveries-only stanza acked by Baileys', 10)
    await new Promise((resolve) => setTimeout(resolve, 300))
    assert.equal(emu.unackedCount(OWN), 2, 'the stanzas with views wait for their commit')

    const views = p.sink.views(SID, since).map((v) => [v.messageId, v.viewerJid, v.viewerNumber, v.type])
    assert.deepEqual(views.sort((a, b) => String(a[1]).localeCompare(String(b[1]))), [
      [statusId, `${r.lid}@lid`, r.number, 'read'],
      [statusId, `${pl.lid}@lid`, null, 'played'],
      [statusId, `${anon.lid}@lid`, null, 'read']
    ].sort((a, b) => String(a[1]).localeCompare(String(b[1]))), 'no SAGR id, no delivery; the number from participant_pn')
    const seen = p.events.all('status-receipts', (e) => e.sessionId === SID, mark).flatMap((e) => e.receipts)
    assert.deepEqual(seen.filter((x) => x.type === 'delivery').map((x) => x.viewerJid).sort(), [`${d.lid}@lid`, `${onlyDelivered.lid}@lid`].sort())

    p.sink.holdWith = null
    release()
    await waitFor(() => emu.unackedCount(OWN) === 0, 15_000, 'the held stanzas acked after their commit', 10)
    assert.equal(acked() - ackedBefore, 3, 'each stanza acked once')

    // the mapping participant_pn gave is learned: the sink heard it, Baileys' LID store keeps it
    await waitFor(() => p.sink.mapped.some((m) => m.lid === `${r.lid}@lid` && m.number === r.number), 15_000, 'the mapping handed to the sink', 10)
    const stored = tmp.db.sqlite.prepare<[string, string], { value: string }>("SELECT value FROM auth_keys WHERE session_id = ? AND type = 'lid-mapping' AND key_id = ?")
    await waitFor(() => stored.get(SID, `${r.lid}_reverse`) !== undefined, 15_000, 'the mapping in Baileys\' LID store', 10)
    assert.match(stored.get(SID, `${r.lid}_reverse`)?.value ?? '', new RegExp(r.number))
    // a later simple-form view by that LID alone gets the number
    const later = p.sink.commits.length
    await emu.sendViews(statusId, { viewers: [r.number], type: 'played', via: 'lid', force: true })
    await waitFor(() => p.sink.views(SID, later).length === 1, 15_000, 'the later view', 10)
    assert.equal(p.sink.views(SID, later)[0].viewerNumber, r.number)
  })
})
