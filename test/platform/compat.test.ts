import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { test } from 'node:test'
import { WebSocketClient } from '@whiskeysockets/baileys/lib/Socket/Client/websocket.js'
import { ASSUMPTIONS, checkCompatibility, loadedBaileys, type Loaded } from '../../src/platform/baileys/index.js'
import { build, waitFor } from '../helper.js'
import type { Health } from '../../schemas/system.js'

// The start-up check of the Baileys internals the service relies on (src/platform/baileys/assumptions.ts):
// it holds against the installed copies, each assumption fails when what it checks is broken, and a
// stubbed-away internal keeps every session from starting, with the log and /api/health naming it.

const real = loadedBaileys()

/** `loaded` with one file's text changed */
const withSource = (file: string, change: (text: string) => string): Loaded =>
  ({ ...real, source: (f) => f === file ? change(real.source(f)) : real.source(f) })
const withBaileys = (patch: Record<string, unknown>): Loaded => ({ ...real, baileys: { ...real.baileys, ...patch } })
const drop = (needle: string) => (text: string): string => text.split(needle).join('')
/** `loaded` whose socket config builds Baileys' signal repository with some members replaced */
const withRepository = (patch: Record<string, unknown>): Loaded => {
  const config = real.baileys.DEFAULT_CONNECTION_CONFIG as { makeSignalRepository: (...args: unknown[]) => object }
  const makeSignalRepository = (...args: unknown[]) => ({ ...config.makeSignalRepository(...args), ...patch })
  return withBaileys({ DEFAULT_CONNECTION_CONFIG: { ...config, makeSignalRepository } })
}

/** one way to break each assumption: add one here for every entry of the registry */
const BREAKERS: Record<string, () => Loaded> = {
  'frame-event-first': () => withSource('lib/Socket/socket.js', drop("ws.emit('frame', frame)")),
  'callback-event-prefix': () => withBaileys({ DEF_CALLBACK_PREFIX: 'CALLBACK:' }),
  'receipt-ack': () => withSource('lib/Socket/messages-recv.js', drop('await sendMessageAck(node)')),
  'ws-client-socket': () => ({ ...real, WebSocketClient: class { connect (): void {} get isOpen (): boolean { return false } } }),
  'ws-raw-socket': () => ({ ...real, WebSocket: class { send (): void {} } }),
  'pending-queries-on-error': () => withSource('lib/Socket/socket.js', drop("ws.on('error', onErr)")),
  'signal-repository': () => withRepository({ decryptMessage: undefined }),
  'decrypt-in-key-transaction': () => withSource('lib/Utils/decode-wa-message.js', drop('unpadRandomMax16(msgBuffer)')),
  'shared-key-transactions': () => withSource('lib/Utils/auth-utils.js', (text) => text.replace('await txStorage.run(ctx, work)', 'await txStorage.run(ctx, work)\n    txStorage.run(ctx, () => {})')),
  'lid-mapping-keys': () => withSource('lib/Signal/lid-mapping.js', (text) => text.replace('batchData[`${lidUser}_reverse`]', 'batchData[`reverse:${lidUser}`]')),
  'noise-trust-root': () => withBaileys({ WA_CERT_DETAILS: { SERIAL: 0 } }),
  'libsignal-curve': () => ({ ...real, curve: { ...real.curve, verifySignature: undefined } }),
  // the status post path (src/platform/baileys/assumptions-status.ts)
  'usync-devices-lid': () => withSource('lib/Socket/messages-send.js', drop('requestedLidUsers.add(user)')),
  'user-devices-cache': () => withSource('lib/Socket/messages-send.js', drop('userDevicesCache,')),
  'assert-sessions': () => withSource('lib/Socket/messages-send.js', drop('const assertSessions = async (jids, force)')),
  'send-node': () => withSource('lib/Socket/socket.js', drop('const sendNode = (frame)')),
  'socket-key-store': () => withSource('lib/Socket/socket.js', drop('authState: { creds, keys },')),
  'sender-key-types': () => withSource('lib/Socket/messages-send.js', (text) => text.replace('senderKeyMap[deviceJid] = true', 'senderKeyMap.push(deviceJid)')),
  // mentions and group statuses (src/platform/baileys/status-mention.ts, assumptions-contact-status.ts)
  'group-status-decrypt': () => withSource('lib/Utils/decode-wa-message.js', (text) => text.replace('else if (isJidGroup(from)) {', 'else if (isJidGroup(from) && false) {')),
  'relay-additional-nodes': () => withSource('lib/Socket/messages-send.js', drop('stanza.content.push(...additionalNodes);')),
  'status-relay-ignores-key-memory': () => withSource('lib/Socket/messages-send.js', (text) => text.split('if (!participant && !isStatus)').join('if (!participant)')),
  'own-lid-account': () => withSource('lib/Socket/socket.js', drop('me: { ...authState.creds.me, lid: node.attrs.lid }')),
  'signal-encrypt': () => withSource('lib/Signal/libsignal.js', (text) => text.replace("'pkmsg' : 'msg'", "'prekey' : 'msg'")),
  'pre-key-query': () => withSource('lib/Socket/socket.js', drop('const query = async (node, timeoutMs)')),
  'inject-e2e-sessions': () => withBaileys({ parseAndInjectE2ESessions: undefined }),
  'validate-session': () => withRepository({ validateSession: undefined }),
  'signal-address': () => withRepository({ jidToSignalProtocolAddress: (jid: string) => jid }),
  'sender-key-name': () => ({ ...real, SenderKeyName: class { constructor (readonly group: string, readonly sender: { id: string }) {} toString (): string { return `${this.group}::${this.sender.id}` } } }),
  'lid-lookup': () => withRepository({ lidMapping: { storeLIDPNMappings: async () => {}, getLIDForPN: async () => null } }),
  'message-encoders': () => withBaileys({ encodeSignedDeviceIdentity: undefined }),
  'identity-change-notification': () => withSource('lib/Utils/identity-change-handler.js', (text) => text.replace("getBinaryNodeChild(node, 'identity')", "getBinaryNodeChild(node, 'identity-key')")),
  'error-ack-update': () => withSource('lib/Socket/messages-recv.js', drop('status: WAMessageStatus.ERROR')),
  // status retry receipts (src/platform/baileys/status-retry.ts)
  'retry-receipt-relay': () => withSource('lib/Socket/messages-recv.js', drop('await sendMessagesAgain(key, ids, retryNode, node)')),
  'retry-receipt-keys': () => withBaileys({ extractE2ESessionFromRetryReceipt: undefined }),
  'lid-for-pn': () => withSource('lib/Signal/lid-mapping.js', drop('const pnDevice = decoded.device')),
  // the phone's contacts and status privacy (src/platform/baileys/assumptions-phone.ts)
  'app-state-resync': () => withSource('lib/Socket/chats.js', (text) => text.replace('return_snapshot: (shouldForceSnapshot || !state.version).toString()', "return_snapshot: 'false'")),
  'contact-action-upsert': () => withSource('lib/Utils/sync-action-utils.js', (text) => text.replace('name: action.fullName || action.firstName', 'name: action.firstName || action.fullName')),
  'status-privacy-setting': () => withSource('lib/Utils/chat-utils.js', (text) => text.replace("setting: 'statusPrivacy'", "setting: 'statusPrivacySetting'")),
  'app-state-key-share': () => withSource('lib/Utils/process-message.js', drop("ev.emit('creds.update', { myAppStateKeyId: newAppStateSyncKeyId });")),
  'server-sync-notification': () => withSource('lib/Socket/messages-recv.js', drop('await resyncAppState([name], false);')),
  'event-buffer-flush': () => withBaileys({ makeEventBuffer: undefined }),
  // contacts' statuses as <status> stanzas (src/platform/baileys/assumptions-contact-status.ts)
  'status-stanza-unhandled': () => withSource('lib/Socket/messages-recv.js', (text) => text.replace("ws.on('CB:message'", "ws.on('CB:status', handleMessage);\n    ws.on('CB:message'")),
  'status-stanza-decrypt': () => withSource('lib/Utils/decode-wa-message.js', drop('await repository.processSenderKeyDistributionMessage({')),
  'media-download-host': () => withSource('lib/Utils/messages-media.js', drop('const fallbackHost = opts.host ?? extractHost(url)'))
}

test('every assumption holds against the installed Baileys; each names its source and a guard test that exists', () => {
  const found = checkCompatibility()
  assert.deepEqual(found.broken, [])
  assert.equal(found.compatible, true)
  assert.equal(found.assumptions, ASSUMPTIONS.length)
  assert.match(found.baileys, /^7\.0\.0-rc14$/, 'rc14 is pinned (docs/architecture.md): upgrading means reviewing UPGRADING.md')
  assert.equal(new Set(ASSUMPTIONS.map((a) => a.name)).size, ASSUMPTIONS.length, 'names are unique')
  for (const a of ASSUMPTIONS) {
    for (const guard of a.guard.split(', ')) assert.ok(existsSync(guard), `${a.name}: guard ${guard} exists`)
    assert.ok(a.source.length > 0 && a.expects.length > 0)
  }
})

test('each assumption fails, alone, when what it checks is broken', () => {
  assert.deepEqual(Object.keys(BREAKERS).sort(), ASSUMPTIONS.map((a) => a.name).sort(), 'one breaker per assumption')
  for (const a of ASSUMPTIONS) {
    const found = checkCompatibility(BREAKERS[a.name]())
    assert.deepEqual(found.broken.map((b) => b.name), [a.name], `breaking ${a.name}`)
    assert.equal(found.compatible, false)
    assert.deepEqual(found.broken[0], { name: a.name, expects: a.expects, source: a.source })
  }
})

test('an internal stubbed away: no session starts, the answer and the log name it, /api/health reports it', async (t) => {
  const proto = WebSocketClient.prototype as unknown as Record<string, unknown>
  const send = Object.getOwnPropertyDescriptor(proto, 'send')
  assert.ok(send !== undefined)
  delete proto.send
  t.after(() => { Object.defineProperty(proto, 'send', send) })

  const lines: Array<Record<string, unknown>> = []
  const app = await build(t, { LOG_LEVEL: 'info' }, { logStream: { write: (line) => { lines.push(JSON.parse(line) as Record<string, unknown>) } } })
  const res = await app.api({ method: 'POST', url: '/api/sessions', payload: { sessionId: 'refused', sessionName: 'refused', authMethod: 'qrcode' } })
  assert.equal(res.statusCode, 503, res.body)
  const body = res.json<{ success: boolean, error: string }>()
  assert.equal(body.success, false)
  assert.match(body.error, /Sessions cannot start: the installed Baileys 7\.0\.0-rc14 breaks the assumption "ws-client-socket"/)
  assert.equal(app.app.platform.snapshot('refused'), null, 'no session runs')

  const logged = lines.find((l) => l.assumption === 'ws-client-socket')
  assert.ok(logged !== undefined, 'the log names the assumption')
  assert.equal(logged.level, 50)
  assert.match(String(logged.msg), /"ws-client-socket" does not hold: no session will start/)
  assert.match(String(logged.source), /lib\/Socket\/Client\/websocket\.js/)

  const health = (await app.api({ method: 'GET', url: '/api/health' })).json<{ success: boolean, data: Health }>()
  assert.equal(health.success, true)
  assert.equal(health.data.status, 'degraded')
  const platform = health.data.checks.platform as { loaded: boolean, compatible?: boolean, broken?: Array<{ name: string }> }
  assert.equal(platform.loaded, true)
  assert.equal(platform.compatible, false)
  assert.deepEqual(platform.broken?.map((b) => b.name), ['ws-client-socket'])
})

test('/api/health: the platform check once loaded (compatible, every assumption checked)', async (t) => {
  const app = await build(t)
  const platform = await waitFor(async () => {
    const h = (await app.api({ method: 'GET', url: '/api/health' })).json<{ data: Health }>().data
    const p = h.checks.platform as { loaded: boolean }
    return p.loaded ? h.checks.platform : undefined
  }, 10_000, 'the platform loaded')
  assert.deepEqual(platform, { loaded: true, baileys: '7.0.0-rc14', compatible: true, assumptions: ASSUMPTIONS.length, broken: [], clientExpiresAt: null, clientExpiresSoon: false })
})
