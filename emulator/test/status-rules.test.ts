import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { encodeWAMessage, USyncQuery, USyncUser, type BinaryNode, type WASocket } from '@whiskeysockets/baileys'
import {
  endSocket,
  linkWithQr,
  relayStatus,
  trustEmulatorRoot,
  unrefBaileysUploadTimer,
  waitForMessageAck,
  waitForMessageError
} from '../src/baileys-helpers.js'
import { Account } from '../src/accounts.js'
import { devicesVisible } from '../src/iq-handlers.js'
import { startEmulator, testCertPaths, type ContactInfo, type Emulator, type StatusRecord } from '../src/index.js'
import { kindFromStanza, kindRuleBroken, readStanza, stanzaRuleBroken } from '../src/status-rules.js'

const STATUS = 'status@broadcast'
const pn = (number: string) => `${number}@s.whatsapp.net`
const lidJid = (lid: string) => `${lid}@lid`
const newId = () => `3EB0${randomBytes(9).toString('hex').toUpperCase()}`
const devicesOf = (record: StatusRecord) => record.deliveries.map((d) => `${d.number}:${d.device}`).sort()

interface HandBuilt {
  id?: string
  text: string
  /** bare `<to jid="USER"/>` entries */
  bare: string[]
  /** device jids that get an SKDM `<to><enc/></to>` */
  skdmTo?: string[]
  statusSetting?: string
}

/**
 * A status stanza as WA Web builds it (oxidezap/whatsapp-rust wacore/src/send/status.rs): the sender key
 * Baileys keeps for status@broadcast under the own LID (reused, never re-created here), SKDMs only for
 * `skdmTo`, a bare `<to>` per audience user, one skmsg, `<meta status_setting>`; no addressing_mode.
 * Built from Baileys' own Signal repository and sent with `sendNode`.
 */
async function postHandBuilt (sock: WASocket, post: HandBuilt): Promise<{ id: string, error?: string }> {
  const id = post.id ?? newId()
  const { ciphertext, senderKeyDistributionMessage } = await sock.signalRepository.encryptGroupMessage({
    group: STATUS,
    data: encodeWAMessage({ extendedTextMessage: { text: post.text } }),
    meId: sock.user!.lid!
  })
  const participants: BinaryNode[] = []
  if (post.skdmTo?.length) {
    await sock.assertSessions(post.skdmTo, false)
    const skdm = encodeWAMessage({ senderKeyDistributionMessage: { groupId: STATUS, axolotlSenderKeyDistributionMessage: senderKeyDistributionMessage } })
    for (const jid of post.skdmTo) {
      const { type, ciphertext: enc } = await sock.signalRepository.encryptMessage({ jid, data: skdm })
      participants.push({ tag: 'to', attrs: { jid }, content: [{ tag: 'enc', attrs: { v: '2', type }, content: enc }] })
    }
  }
  for (const jid of post.bare) participants.push({ tag: 'to', attrs: { jid } })
  const acked = waitForMessageAck(sock, () => id)
  await sock.sendNode({
    tag: 'message',
    attrs: { to: STATUS, id, type: 'text' },
    content: [
      { tag: 'participants', attrs: {}, content: participants },
      { tag: 'enc', attrs: { v: '2', type: 'skmsg' }, content: ciphertext },
      { tag: 'meta', attrs: { status_setting: post.statusSetting ?? 'contacts' } }
    ]
  })
  return { id, error: (await acked).error }
}

describe('status rules on hand-made stanzas', () => {
  const migrated = new Account('15550000100', '100000000000100')
  const legacy = new Account('15550000101', '100000000000101', true)
  const enc: BinaryNode = { tag: 'enc', attrs: { v: '2', type: 'pkmsg' }, content: Buffer.alloc(1) }
  const stanza = (attrs: Record<string, string>, to: BinaryNode[], meta?: string): BinaryNode => ({
    tag: 'message',
    attrs: { to: STATUS, id: 'X', type: 'text', ...attrs },
    content: [
      { tag: 'participants', attrs: {}, content: to },
      { tag: 'enc', attrs: { v: '2', type: 'skmsg' }, content: Buffer.alloc(1) },
      ...(meta === undefined ? [] : [{ tag: 'meta', attrs: { status_setting: meta } }])
    ]
  })

  it('reads bare <to>s as the audience and <to>s with a device part or an <enc> as device-level', () => {
    const shape = readStanza(stanza({}, [
      { tag: 'to', attrs: { jid: '1@lid' } },
      { tag: 'to', attrs: { jid: '2@lid' }, content: [enc] },
      { tag: 'to', attrs: { jid: '2:3@lid' }, content: [enc] },
      { tag: 'to', attrs: { jid: '4:0@lid' } }
    ], 'contacts'))
    assert.deepEqual(shape.bare.map((t) => t.jid), ['1@lid'])
    assert.deepEqual(shape.devices.map((t) => [t.jid, t.device, t.enc !== undefined]), [['2@lid', 0, true], ['2:3@lid', 3, true], ['4:0@lid', 0, false]])
    assert.equal(shape.statusSetting, 'contacts')
  })

  it('applies PN addressing and the missing meta to migrated accounts only, addressing_mode and meta on reactions/revokes to all', () => {
    const pnPost = readStanza(stanza({}, [{ tag: 'to', attrs: { jid: '15550000001@s.whatsapp.net' }, content: [enc] }]))
    assert.equal(stanzaRuleBroken(pnPost, migrated)?.rule, 'pn-participants')
    assert.equal(stanzaRuleBroken(pnPost, legacy), undefined)
    assert.equal(kindRuleBroken(pnPost, migrated, 'post')?.rule, 'missing-status-setting')
    assert.equal(kindRuleBroken(pnPost, legacy, 'post'), undefined)
    const withMode = readStanza(stanza({ addressing_mode: 'lid' }, [{ tag: 'to', attrs: { jid: '1@lid' } }], 'contacts'))
    assert.equal(stanzaRuleBroken(withMode, migrated)?.rule, 'addressing-mode')
    assert.equal(stanzaRuleBroken(withMode, legacy)?.rule, 'addressing-mode')
    const reaction = readStanza(stanza({ type: 'reaction' }, [{ tag: 'to', attrs: { jid: '1@lid' } }], 'contacts'))
    assert.equal(kindFromStanza(reaction), 'reaction')
    assert.equal(kindRuleBroken(reaction, legacy, 'reaction')?.rule, 'status-setting-on-reaction')
    const revoke = readStanza(stanza({ edit: '7' }, [{ tag: 'to', attrs: { jid: '1@lid' } }], 'contacts'))
    assert.equal(kindFromStanza(revoke), 'revoke')
    assert.equal(kindRuleBroken(revoke, migrated, 'revoke')?.rule, 'status-setting-on-revoke')
    const post = readStanza(stanza({}, [{ tag: 'to', attrs: { jid: '1@lid' } }], 'denylist'))
    assert.equal(kindFromStanza(post), undefined, 'a WA Web revoke looks like this too: the content decides')
    assert.equal(stanzaRuleBroken(post, migrated) ?? kindRuleBroken(post, migrated, 'post'), undefined)
  })

  it('answers devices by number only for the asker itself and legacy parties', () => {
    const other = new Account('15550000102', '100000000000102')
    assert.equal(devicesVisible(other, 's.whatsapp.net', migrated), false)
    assert.equal(devicesVisible(other, 'lid', migrated), true)
    assert.equal(devicesVisible(migrated, 's.whatsapp.net', migrated), true)
    assert.equal(devicesVisible(legacy, 's.whatsapp.net', migrated), true)
    assert.equal(devicesVisible(undefined, 'lid', migrated), false)
  })
})

describe('status rules: a LID-migrated account (the default)', () => {
  let emu: Emulator
  let sock: WASocket
  const OWN = '15558880000'
  let ownLid = ''
  let alice: ContactInfo
  let bob: ContactInfo
  let legacyCarol: ContactInfo
  let audience: string[] = []

  /** relayStatus, then the server's ack and the emulator's record */
  const relay = async (content: Parameters<typeof relayStatus>[1], options: Partial<Parameters<typeof relayStatus>[2]> = {}) => {
    const id = options.messageId ?? newId()
    const acked = waitForMessageAck(sock, () => id)
    await relayStatus(sock, content, { statusJidList: audience, ...options, messageId: id })
    return { id, ack: await acked }
  }

  before(async () => {
    unrefBaileysUploadTimer()
    emu = await startEmulator({ tls: testCertPaths() })
    trustEmulatorRoot(emu.rootPublicKey)
    ownLid = emu.createAccount(OWN).lid
    alice = emu.addContact({ number: '15558880001' })
    bob = emu.addContact({ number: '15558880002', devices: 2 })
    legacyCarol = emu.addContact({ number: '15558880003', legacy: true })
    audience = [ownLid, alice.lid, bob.lid].map(lidJid)
    ;({ sock } = await linkWithQr(emu, OWN))
  })

  after(async () => {
    await endSocket(sock)
    await emu.stop()
  })

  it('is told its LID at login (Baileys creds.me.lid) and reports legacy: false', () => {
    assert.equal(sock.user?.lid, `${ownLid}:1@lid`)
    assert.equal(emu.getAccount(OWN).legacy, false)
    assert.equal(alice.legacy, false)
    assert.equal(legacyCarol.legacy, true)
  })

  it('usync: a number-keyed device query for a migrated contact answers an empty <device-list/>, the LID-keyed one the devices; lid still maps the number', async () => {
    const query = new USyncQuery().withContext('message').withDeviceProtocol().withLIDProtocol()
    for (const jid of [pn(bob.number), lidJid(bob.lid), pn(OWN), pn(legacyCarol.number)]) query.withUser(new USyncUser().withId(jid))
    const result = await sock.executeUSyncQuery(query)
    const byId = new Map(result!.list.map((u) => [u.id, u]))
    const devices = (jid: string) => (byId.get(jid)?.devices as { deviceList?: { id: number }[] } | undefined)?.deviceList?.map((d) => d.id)
    assert.deepEqual(devices(pn(bob.number)), [], 'migrated contact by number: empty device list (Baileys #2794)')
    assert.equal(byId.get(pn(bob.number))?.lid, lidJid(bob.lid), 'the lid protocol still maps the number')
    assert.deepEqual(devices(lidJid(bob.lid)), [0, 1], 'by LID: the devices')
    assert.deepEqual(devices(pn(OWN)), [0, 1], 'own number: own devices (whatsapp-rust PR #568 fetches own devices by PN)')
    assert.deepEqual(devices(pn(legacyCarol.number)), [0], 'a legacy contact answers by number')
  })

  it("rc14's phone-number post is NACKed 479 (pn-participants), reaches only the poster's own devices' list and is delivered to nobody", async () => {
    const id = newId()
    const failed = waitForMessageError(sock, () => id)
    await sock.sendMessage(STATUS, { text: 'rc14 shape' }, { statusJidList: [OWN, alice.number, bob.number].map(pn), messageId: id })
    assert.deepEqual((await failed).stubParameters, ['479'])
    const record = await emu.waitForStatus((s) => s.id === id && s.rejected !== undefined)
    assert.equal(record.rejected?.rule, 'pn-participants')
    assert.equal(record.rejected?.error, 479)
    assert.deepEqual(record.deliveries, [])
    assert.deepEqual(record.recipients, [])
    assert.equal(record.decrypted, false)
    const [stanza] = record.stanzas
    assert.equal(stanza.accepted, false)
    assert.equal(stanza.statusSetting, undefined)
    // #2794 attempt 1: the PN device queries of the contacts come back empty, so only own devices are listed
    assert.ok(stanza.devices.length > 0)
    assert.ok(stanza.devices.every((jid) => [OWN, ownLid].includes(jid.split(/[:@]/)[0])), stanza.devices.join(','))
    const rejected = emu.rejectedMessages().find((r) => r.id === id)
    assert.deepEqual({ rule: rejected?.rule, error: rejected?.error, kind: rejected?.kind }, { rule: 'pn-participants', error: 479, kind: 'post' })
  })

  it('NACKs a post carrying addressing_mode (whatsapp-rust PR #925)', async () => {
    const { id, ack } = await relay({ text: 'addressing mode' }, { additionalAttributes: { addressing_mode: 'lid' } })
    assert.equal(ack.error, '479')
    const record = emu.status(id)
    assert.equal(record.rejected?.rule, 'addressing-mode')
    assert.equal(record.stanzas[0].attrs.addressing_mode, 'lid')
    assert.deepEqual(record.deliveries, [])
  })

  it('NACKs a post without <meta status_setting>, or with a value that is not contacts|allowlist|denylist', async () => {
    for (const statusSetting of [null, 'everyone']) {
      const { id, ack } = await relay({ text: `setting ${String(statusSetting)}` }, { statusSetting })
      assert.equal(ack.error, '479')
      await emu.settled()
      const record = emu.status(id)
      assert.equal(record.rejected?.rule, 'missing-status-setting')
      assert.equal(record.stanzas[0].statusSetting, statusSetting ?? undefined)
      assert.equal(record.decrypted, false)
    }
  })

  it('accepts a LID-addressed post with <meta status_setting>: every audience device decrypts it, the own phone included, and the record shows the stanza', async () => {
    const { id, ack } = await relay({ text: 'accepted' }, { statusSetting: 'allowlist' })
    assert.equal(ack.error, undefined)
    await emu.settled()
    const record = emu.status(id)
    assert.equal(record.rejected, undefined)
    assert.equal(record.kind, 'post')
    assert.equal(record.text, 'accepted')
    assert.equal(record.statusSetting, 'allowlist')
    assert.deepEqual(record.audience, audience)
    assert.deepEqual(devicesOf(record), [`${alice.number}:0`, `${bob.number}:0`, `${bob.number}:1`, `${OWN}:0`].sort())
    assert.ok(record.deliveries.every((d) => d.decrypted && d.skdm), JSON.stringify(record.deliveries))
    assert.deepEqual(record.errors, [])
    const [stanza] = record.stanzas
    assert.deepEqual({ accepted: stanza.accepted, to: stanza.attrs.to, type: stanza.attrs.type, mode: stanza.attrs.addressing_mode }, { accepted: true, to: STATUS, type: 'text', mode: undefined })
    assert.deepEqual(stanza.audience, [], 'rc14 writes device-level <to>s only')
    // Baileys writes device 0 without a device part: `<to jid="LID@lid"><enc/></to>` (the <enc> makes it device-level)
    for (const jid of [`${alice.lid}@lid`, `${bob.lid}@lid`, `${bob.lid}:1@lid`, `${ownLid}@lid`]) {
      assert.ok(record.skdmDevices.includes(jid), `${jid} got an SKDM`)
    }
  })

  it('NACKs a reaction carrying the meta (whatsapp-rust PR #569) and accepts one without', async () => {
    const target = (await relay({ text: 'react to me' })).id
    await emu.settled()
    const react = { react: { key: { remoteJid: STATUS, fromMe: true, id: target }, text: '👍' } }
    const refused = await relay(react, { statusSetting: 'contacts' })
    assert.equal(refused.ack.error, '479')
    await emu.settled()
    assert.equal(emu.status(refused.id).rejected?.rule, 'status-setting-on-reaction')
    const accepted = await relay(react, { statusSetting: null })
    assert.equal(accepted.ack.error, undefined)
    await emu.settled()
    const record = emu.status(accepted.id)
    assert.equal(record.kind, 'reaction')
    assert.equal(record.stanzas[0].attrs.type, 'reaction')
  })

  it('NACKs a revoke carrying the meta, told by its content (WA Web: no edit attribute) or by edit="7"; accepts one without', async () => {
    const target = (await relay({ text: 'revoke me' })).id
    await emu.settled()
    const revoke = { delete: { remoteJid: STATUS, fromMe: true, id: target } }
    const byContent = await relay(revoke, { statusSetting: 'contacts' })
    assert.equal(byContent.ack.error, '479')
    const byEdit = await relay(revoke, { statusSetting: 'contacts', additionalAttributes: { edit: '7' } })
    assert.equal(byEdit.ack.error, '479')
    await emu.settled()
    for (const { id } of [byContent, byEdit]) {
      const rejected = emu.rejectedMessages().find((r) => r.id === id)
      assert.deepEqual({ rule: rejected?.rule, kind: rejected?.kind }, { rule: 'status-setting-on-revoke', kind: 'revoke' })
    }
    assert.equal(emu.status(target).revoked, undefined, 'a NACKed revoke revokes nothing')
    const ok = await relay(revoke, { statusSetting: null })
    assert.equal(ok.ack.error, undefined)
    const record = await emu.waitForStatus((s) => s.id === target && s.revoked === true)
    assert.equal(record.revokeMessageId, ok.id)
    assert.deepEqual([...(record.revokedFor ?? [])].sort(), [OWN, alice.number, bob.number].sort())
  })

  it('a WA-Web-shaped post with bare <to>s and no SKDM is decrypted by devices that kept the sender key, and only by them', async () => {
    // everyone in `audience` holds the sender key from the accepted posts above
    const warm = await postHandBuilt(sock, { text: 'warm', bare: audience })
    assert.equal(warm.error, undefined)
    await emu.settled()
    let record = emu.status(warm.id)
    assert.deepEqual(record.stanzas[0].audience, audience)
    assert.deepEqual(record.skdmDevices, [])
    assert.deepEqual(devicesOf(record), [`${alice.number}:0`, `${bob.number}:0`, `${bob.number}:1`, `${OWN}:0`].sort())
    assert.ok(record.deliveries.every((d) => d.decrypted && !d.skdm && d.encType === 'none'), JSON.stringify(record.deliveries))
    assert.equal(record.text, 'warm')

    // a new contact never got an SKDM: the server still fans the skmsg out to it, and it cannot read it
    const dave = emu.addContact({ number: '15558880004' })
    const cold = await postHandBuilt(sock, { text: 'cold', bare: [...audience, lidJid(dave.lid)] })
    assert.equal(cold.error, undefined, 'the server cannot know who holds the key')
    await emu.settled()
    record = emu.status(cold.id)
    const daveDelivery = record.deliveries.find((d) => d.number === dave.number)
    assert.equal(daveDelivery?.decrypted, false)
    assert.match(daveDelivery?.error ?? '', /no sender key/)
    assert.equal(record.deliveries.filter((d) => d.decrypted).length, 4)

    // an SKDM for that one device (bare <to> for every user, as the service sends them) fixes it
    const fixed = await postHandBuilt(sock, { text: 'fixed', bare: [...audience, lidJid(dave.lid)], skdmTo: [lidJid(dave.lid)] })
    assert.equal(fixed.error, undefined)
    await emu.settled()
    record = emu.status(fixed.id)
    assert.deepEqual(record.skdmDevices, [lidJid(dave.lid)])
    assert.ok(record.deliveries.every((d) => d.decrypted), JSON.stringify(record.deliveries))
    assert.deepEqual(record.deliveries.filter((d) => d.skdm).map((d) => d.number), [dave.number])
    assert.deepEqual(record.audience, [...audience, lidJid(dave.lid)])
  })

  it("a contact's new device is in the fan-out without the key until an SKDM reaches it", async () => {
    assert.equal(emu.addContactDevice(alice.number).devices, 2)
    const before = await postHandBuilt(sock, { text: 'new device', bare: audience })
    assert.equal(before.error, undefined)
    await emu.settled()
    let record = emu.status(before.id)
    const fresh = record.deliveries.find((d) => d.number === alice.number && d.device === 1)
    assert.equal(fresh?.decrypted, false)
    assert.match(fresh?.error ?? '', /no sender key/)
    const after = await postHandBuilt(sock, { text: 'new device, keyed', bare: audience, skdmTo: [`${alice.lid}:1@lid`] })
    assert.equal(after.error, undefined)
    await emu.settled()
    record = emu.status(after.id)
    assert.deepEqual(record.skdmDevices, [`${alice.lid}:1@lid`])
    assert.ok(record.deliveries.every((d) => d.decrypted), JSON.stringify(record.deliveries))
  })

  it('accumulates chunks under one id, each listing its own audience; a NACKed chunk is recorded with its rule', async () => {
    const first = await postHandBuilt(sock, { text: 'chunked', bare: audience.slice(0, 2) })
    const second = await postHandBuilt(sock, { id: first.id, text: 'chunked', bare: audience.slice(2) })
    const third = await postHandBuilt(sock, { id: first.id, text: 'chunked', bare: [pn(bob.number)] })
    assert.deepEqual([first.error, second.error, third.error], [undefined, undefined, '479'])
    await emu.settled()
    const record = emu.status(first.id)
    assert.equal(record.chunks, 3)
    assert.deepEqual(record.stanzas.map((s) => [s.chunk, s.accepted, s.audience]), [
      [1, true, audience.slice(0, 2)],
      [2, true, audience.slice(2)],
      [3, false, [pn(bob.number)]]
    ])
    assert.deepEqual(record.audience, audience)
    assert.deepEqual([...record.recipients].sort(), [OWN, alice.number, bob.number].sort())
    assert.deepEqual(record.rejected, { error: 479, rule: 'pn-participants', detail: record.rejected?.detail, chunk: 3 })
    assert.ok(record.deliveries.every((d) => d.decrypted))
  })
})

describe('status rules: a legacy account (not LID-migrated)', () => {
  let emu: Emulator
  let sock: WASocket
  const OWN = '15559990000'
  let l1: ContactInfo
  let l2: ContactInfo
  let migrated: ContactInfo

  before(async () => {
    unrefBaileysUploadTimer()
    emu = await startEmulator({ tls: testCertPaths() })
    trustEmulatorRoot(emu.rootPublicKey)
    assert.equal(emu.createAccount(OWN, { legacy: true }).legacy, true)
    l1 = emu.addContact({ number: '15559990001', legacy: true })
    l2 = emu.addContact({ number: '15559990002', devices: 2, legacy: true })
    migrated = emu.addContact({ number: '15559990003' })
    ;({ sock } = await linkWithQr(emu, OWN))
  })

  after(async () => {
    await endSocket(sock)
    await emu.stop()
  })

  it('is not told a LID at login', () => {
    assert.equal(sock.user?.lid, undefined)
    assert.equal(emu.getAccount(OWN).legacy, true)
  })

  it("accepts rc14's phone-number post without meta, decrypted by every device, the own phone included", async () => {
    const id = newId()
    const acked = waitForMessageAck(sock, () => id)
    await sock.sendMessage(STATUS, { text: 'legacy' }, { statusJidList: [OWN, l1.number, l2.number].map(pn), messageId: id })
    assert.equal((await acked).error, undefined)
    const record = await emu.waitForStatus((s) => s.id === id && s.decrypted)
    await emu.settled()
    const final = emu.status(id)
    assert.equal(record.rejected, undefined)
    assert.equal(final.statusSetting, undefined)
    assert.deepEqual(devicesOf(final), [`${l1.number}:0`, `${l2.number}:0`, `${l2.number}:1`, `${OWN}:0`].sort())
    assert.ok(final.deliveries.every((d) => d.decrypted), JSON.stringify(final.deliveries))
    assert.deepEqual(final.errors, [])
  })

  it('a migrated contact addressed by number is reached by nobody (its device list by number is empty)', async () => {
    const id = newId()
    const acked = waitForMessageAck(sock, () => id)
    await sock.sendMessage(STATUS, { text: 'mixed' }, { statusJidList: [l1.number, migrated.number].map(pn), messageId: id })
    assert.equal((await acked).error, undefined)
    await emu.settled()
    assert.deepEqual(emu.status(id).recipients, [l1.number])
  })

  it('turns numbers it has never heard of into legacy contacts when the client asks for their devices', async () => {
    const stranger = '15559999999'
    const id = newId()
    const acked = waitForMessageAck(sock, () => id)
    await sock.sendMessage(STATUS, { text: 'hi stranger' }, { statusJidList: [pn(OWN), pn(stranger)], messageId: id })
    assert.equal((await acked).error, undefined)
    await emu.settled()
    const record = emu.status(id)
    assert.deepEqual([...record.recipients].sort(), [OWN, stranger].sort())
    assert.ok(record.deliveries.every((d) => d.decrypted))
    assert.deepEqual({ devices: emu.getContact(stranger).devices, legacy: emu.getContact(stranger).legacy }, { devices: 1, legacy: true })
  })

  it('still NACKs addressing_mode', async () => {
    const id = newId()
    const acked = waitForMessageAck(sock, () => id)
    await relayStatus(sock, { text: 'mode' }, { statusJidList: [pn(l1.number)], statusSetting: null, additionalAttributes: { addressing_mode: 'pn' }, messageId: id })
    assert.equal((await acked).error, '479')
    await emu.settled()
    assert.equal(emu.status(id).rejected?.rule, 'addressing-mode')
  })
})
