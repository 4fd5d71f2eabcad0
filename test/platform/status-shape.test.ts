import assert from 'node:assert/strict'
import { test } from 'node:test'
import { addTransactionCapability, DEFAULT_CONNECTION_CONFIG, initAuthCreds, proto, type SignalDataTypeMap, type WASocket } from '@whiskeysockets/baileys'
import { pino } from 'pino'
import { statusMediaType, statusStanzaType } from '../../src/platform/baileys/status-shape.js'
import { identityChangedUser, loadKeyMemory, rememberDevices, rotateStatusSenderKey } from '../../src/platform/baileys/status-key-memory.js'
import { revokeMessage } from '../../src/platform/session/status-message.js'

// The content-dependent attributes of an LID status stanza (WA Web's typeAttributeFromProtobuf, as
// whatsapp-rust wacore/src/send/classify.rs mirrors it); the stanza itself runs through real Baileys
// against the emulator in status-lid.test.ts.

const m = (o: Record<string, unknown>): proto.IMessage => proto.Message.fromObject(o)

test('a text status is type text without mediatype; a link preview is media/url', () => {
  assert.equal(statusStanzaType(m({ extendedTextMessage: { text: 'hi', backgroundArgb: 0xff336699 } })), 'text')
  assert.equal(statusMediaType(m({ extendedTextMessage: { text: 'hi' } })), undefined)
  const link = m({ extendedTextMessage: { text: 'see https://example.org', matchedText: 'https://example.org' } })
  assert.equal(statusStanzaType(link), 'media')
  assert.equal(statusMediaType(link), 'url')
})

test('image and video statuses are media with their mediatype; a gif video is gif', () => {
  assert.deepEqual([statusStanzaType(m({ imageMessage: { caption: 'x' } })), statusMediaType(m({ imageMessage: {} }))], ['media', 'image'])
  assert.deepEqual([statusStanzaType(m({ videoMessage: {} })), statusMediaType(m({ videoMessage: {} }))], ['media', 'video'])
  assert.equal(statusMediaType(m({ videoMessage: { gifPlayback: true } })), 'gif')
})

test('a revoke is type text without mediatype', () => {
  const revoke = revokeMessage('3EB0ABCDEF')
  assert.equal(statusStanzaType(revoke), 'text')
  assert.equal(statusMediaType(revoke), undefined)
})

test('an identity change names the contact; the own account and notifications without <identity> do not count', () => {
  const note = (from: string, child = 'identity') => ({ tag: 'notification', attrs: { from, type: 'encrypt' }, content: [{ tag: child, attrs: {} }] })
  assert.equal(identityChangedUser(note('100000000000001@lid'), '100000000000009:3@lid', '15550001:3@s.whatsapp.net'), '100000000000001@lid')
  assert.equal(identityChangedUser(note('100000000000009@lid'), '100000000000009:3@lid', '15550001:3@s.whatsapp.net'), null)
  assert.equal(identityChangedUser(note('15550001@s.whatsapp.net'), '100000000000009:3@lid', '15550001:3@s.whatsapp.net'), null)
  assert.equal(identityChangedUser(note('100000000000001@lid', 'count'), '100000000000009:3@lid', '15550001:3@s.whatsapp.net'), null)
})

test('rotating drops the sender key Baileys holds under the own LID for status@broadcast, and who holds it', async () => {
  // Baileys' own signal repository over an in-memory key store: the key name format is libsignal's
  const logger = pino({ level: 'silent' })
  const data = new Map<string, unknown>()
  const store = {
    get: async <T extends keyof SignalDataTypeMap>(type: T, ids: string[]) =>
      Object.fromEntries(ids.flatMap((id) => data.has(`${type}/${id}`) ? [[id, data.get(`${type}/${id}`)]] : [])) as { [id: string]: SignalDataTypeMap[T] },
    set: async (values: Record<string, Record<string, unknown>>) => {
      for (const [type, byId] of Object.entries(values)) {
        for (const [id, value] of Object.entries(byId)) { if (value === null) data.delete(`${type}/${id}`); else data.set(`${type}/${id}`, value) }
      }
    }
  }
  const keys = addTransactionCapability(store, logger, { maxCommitRetries: 1, delayBetweenTriesMs: 1 })
  const creds = initAuthCreds()
  const signalRepository = DEFAULT_CONNECTION_CONFIG.makeSignalRepository({ creds, keys }, logger, async () => [])
  const sock = { authState: { creds, keys }, signalRepository } as unknown as WASocket
  const meLid = '100000000000009:3@lid'
  const other = { group: 'status@broadcast', meId: '15550001:3@s.whatsapp.net' }

  await signalRepository.encryptGroupMessage({ group: 'status@broadcast', meId: meLid, data: Buffer.from([1, 2, 3]) })
  await signalRepository.encryptGroupMessage({ ...other, data: Buffer.from([1]) })
  assert.equal(await signalRepository.hasSenderKey({ group: 'status@broadcast', meId: meLid }), true)
  await rememberDevices(sock, ['100000000000001@lid', '100000000000001:1@lid'])
  assert.deepEqual(await loadKeyMemory(sock), { '100000000000001@lid': true, '100000000000001:1@lid': true })

  await rotateStatusSenderKey(sock, meLid)
  assert.equal(await signalRepository.hasSenderKey({ group: 'status@broadcast', meId: meLid }), false)
  assert.equal(await signalRepository.hasSenderKey(other), true, 'only the own LID\'s status key goes')
  assert.deepEqual(await loadKeyMemory(sock), {})
})
