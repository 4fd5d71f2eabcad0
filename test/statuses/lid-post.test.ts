import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { StatusRecord } from '@status-tracker/emulator'
import { form, jpeg, mp4 } from '../uploads/fixtures.js'
import { waitFor } from '../helper.js'
import { mediaTrusted, serveFiles, settledPost, startStack, type Stack } from '../stack.js'

// Status posts from an LID-migrated account, shaped the way WA Web posts them (docs/platform.md), through
// the HTTP API and real Baileys against the emulator, which enforces the server's current rules (479 for
// addressing_mode, phone-number participants, a post without <meta status_setting>, a revoke with it)
// and records each stanza's audience, status_setting and SKDM devices.

const OWN = '4915200000001'
const LEGACY = '4915200000002'
const A = '4915200000011'
const B = '4915200000012'
const C = '4915200000013'
/** not on WhatsApp: no LID (the emulator creates no contacts on its own in this file) */
const NOBODY = '4915200000099'

interface Sent { statusId: string, platformMessageId: string, contactCount: number, sentCount: number, state: string, unreachable: string[], message: string }

async function send (s: Stack, body: Record<string, unknown>, sessionId = 'lid'): Promise<Sent> {
  const res = await s.api({ method: 'POST', url: `/api/sessions/${sessionId}/send-status`, payload: body })
  assert.equal(res.statusCode, 200, res.body)
  return res.json<{ data: Sent }>().data
}

async function upload (s: Stack, kind: 'image' | 'video', filename: string, type: string, data: Buffer): Promise<string> {
  const { payload, headers } = form({ field: kind, filename, type, data })
  const res = await s.api({ method: 'POST', url: `/api/upload-${kind}`, payload, headers })
  assert.equal(res.statusCode, 200, res.body)
  return res.json<{ filename: string }>().filename
}

const lidOf = (s: Stack, number: string): string => `${number === OWN || number === LEGACY ? s.emu.getAccount(number).lid : s.emu.getContact(number).lid}@lid`

/** WA Web's shape: accepted, no addressing_mode, LID audience (own LID included), allowlist, decrypted by every device of every recipient and the own phone. */
function assertWaWebShape (s: Stack, record: StatusRecord, recipients: string[], type: 'text' | 'media'): void {
  assert.equal(record.rejected, undefined, JSON.stringify(record.rejected))
  assert.deepEqual(record.errors, [])
  assert.ok(record.stanzas.length >= 1)
  for (const stanza of record.stanzas) {
    assert.equal(stanza.accepted, true)
    assert.equal(stanza.attrs.addressing_mode, undefined)
    assert.equal(stanza.attrs.type, type)
    assert.equal(stanza.statusSetting, 'allowlist')
    for (const jid of [...stanza.audience, ...stanza.devices]) assert.match(jid, /@lid$/, 'participants are LIDs')
  }
  const audience = record.stanzas.flatMap((st) => st.audience)
  assert.deepEqual([...audience].sort(), [OWN, ...recipients].map((n) => lidOf(s, n)).sort(), 'a bare <to> for every audience user, own LID included')
  assert.equal(record.statusSetting, 'allowlist')
  for (const number of recipients) {
    const devices = s.emu.getContact(number).devices
    const got = record.deliveries.filter((d) => d.number === number && d.decrypted).map((d) => d.device)
    assert.equal(new Set(got).size, devices, `every device of ${number} decrypted it`)
  }
  assert.ok(record.deliveries.some((d) => d.number === OWN && d.device === 0 && d.decrypted), 'the poster\'s own phone decrypted it')
}

test('LID-migrated account: WA Web-shaped posts for every content type, the sender key reused, revoke, unreachable numbers; a legacy account still posts', { timeout: 150_000 }, async (t) => {
  const s = await startStack(t, { ALLOW_PRIVATE_URLS: 'true' }, { autoCreateContacts: false })
  s.emu.addContact({ number: A, devices: 2 })
  s.emu.addContact({ number: B })
  s.emu.addContact({ number: C })
  await s.link('lid', OWN)

  let text!: Sent
  await t.test('text with background and font: accepted, LID audience, allowlist, SKDM to every device the first time', async () => {
    text = await send(s, { type: 'text', content: 'LID hello', backgroundColor: '#336699', font: 3, targetNumbers: `${A},${B},${C}` })
    assert.deepEqual([text.state, text.contactCount, text.sentCount, text.unreachable], ['sent', 3, 3, []])
    const record = await settledPost(s, text.platformMessageId)
    assertWaWebShape(s, record, [A, B, C], 'text')
    assert.equal(record.text, 'LID hello')
    assert.equal(record.backgroundArgb, 0xff336699)
    assert.equal(record.font, 3)
    // a first post: the key goes to every device of the recipients and to the own phone
    const expected = [`${lidOf(s, A).replace('@lid', '')}@lid`, `${lidOf(s, A).replace('@lid', '')}:1@lid`, lidOf(s, B), lidOf(s, C), lidOf(s, OWN)]
    assert.deepEqual([...record.skdmDevices].sort(), expected.sort())
    assert.ok(record.stanzas[0].deviceIdentity, 'pkmsg SKDMs come with <device-identity>')
  })

  await t.test('a second post to the same recipients carries an SKDM only to the own phone (the sender key is reused); image status', { skip: !mediaTrusted() && 'NODE_EXTRA_CA_CERTS must point at test/.certs/cert.pem' }, async () => {
    const image = await upload(s, 'image', 'photo.jpg', 'image/jpeg', jpeg())
    const sent = await send(s, { type: 'image', content: image, caption: 'again', targetNumbers: `${A},${B},${C}` })
    const record = await settledPost(s, sent.platformMessageId)
    assertWaWebShape(s, record, [A, B, C], 'media')
    assert.equal(record.type, 'image')
    assert.equal(record.caption, 'again')
    // the recipients' devices hold the key; the poster's own devices get it on every post (whatsapp-rust #999)
    assert.deepEqual(record.skdmDevices, [lidOf(s, OWN)], 'an SKDM to the own phone only')
    assert.deepEqual(record.stanzas.flatMap((st) => st.devices), [lidOf(s, OWN)], 'the bare audience list and the own phone')
  })

  await t.test('video and url statuses are accepted and decrypted', { skip: !mediaTrusted() && 'NODE_EXTRA_CA_CERTS must point at test/.certs/cert.pem' }, async () => {
    const video = await upload(s, 'video', 'clip.mp4', 'video/mp4', mp4())
    const v = await send(s, { type: 'video', content: video, targetNumbers: `${A},${B}` })
    const vr = await settledPost(s, v.platformMessageId)
    assertWaWebShape(s, vr, [A, B], 'media')
    assert.equal(vr.type, 'video')
    const files = await serveFiles(t, { '/p.jpg': { type: 'image/jpeg', body: jpeg() } })
    const u = await send(s, { type: 'url', content: files.url('/p.jpg'), caption: 'from a url', targetNumbers: `${C}` })
    const ur = await settledPost(s, u.platformMessageId)
    assertWaWebShape(s, ur, [C], 'media')
    assert.equal(ur.type, 'image')
    assert.equal(ur.caption, 'from a url')
  })

  await t.test('numbers without a LID are reported unreachable: answer, stored status, statuses-updated', async () => {
    const sent = await send(s, { type: 'text', content: 'some cannot get this', targetNumbers: `${A},${NOBODY}` })
    assert.deepEqual([sent.state, sent.contactCount, sent.sentCount, sent.unreachable], ['sent', 2, 1, [NOBODY]])
    const record = await settledPost(s, sent.platformMessageId)
    assertWaWebShape(s, record, [A], 'text')
    const event = await s.events.next('statuses-updated', (e) => e.statusId === sent.statusId && e.action === 'unreachable')
    assert.deepEqual(event.unreachable, [NOBODY])
    const res = await s.api({ method: 'GET', url: '/api/sessions/lid/sent-statuses' })
    const listed = res.json<{ data: Array<{ id: string, unreachable: string[], sentCount: number }> }>().data.find((r) => r.id === sent.statusId)
    assert.deepEqual([listed?.unreachable, listed?.sentCount], [[NOBODY], 1])
  })

  await t.test('revoke: the same audience, accepted (it carries no <meta>), every recipient told', async () => {
    const res = await s.api({ method: 'DELETE', url: `/api/sessions/lid/delete-status/${text.statusId}?revoke=true` })
    assert.equal(res.statusCode, 200, res.body)
    assert.equal(res.json<{ data: { deletedFromPlatform: boolean } }>().data.deletedFromPlatform, true)
    const r = await waitFor(() => { const x = s.emu.status(text.platformMessageId); return x.revoked === true && (x.revokedFor?.length ?? 0) >= 4 ? x : null }, 10_000, 'revoke in the emulator')
    assert.deepEqual([...(r.revokedFor ?? [])].sort(), [OWN, A, B, C].sort())
    assert.deepEqual(s.emu.rejectedMessages(), [], 'nothing was NACKed')
  })

  await t.test('a legacy (phone-number only) account still posts, the rc14 way', async () => {
    s.emu.addContact({ number: '4915200000021', legacy: true })
    await s.link('legacy', LEGACY, { legacy: true })
    const sent = await send(s, { type: 'text', content: 'legacy hello', targetNumbers: '4915200000021' }, 'legacy')
    assert.deepEqual([sent.state, sent.unreachable], ['sent', []])
    const record = await settledPost(s, sent.platformMessageId)
    assert.equal(record.rejected, undefined)
    assert.deepEqual(record.errors, [])
    assert.ok(record.deliveries.some((d) => d.number === '4915200000021' && d.decrypted))
    assert.equal(record.stanzas[0].statusSetting, undefined, 'rc14 sends no <meta>')
  })
})
