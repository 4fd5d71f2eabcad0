import type { Assumption } from './assumption.js'
import { emptyKeys, inOrder, isFunction, signalRepositoryOf, silentLogger } from './check-helpers.js'

// The Baileys (and libsignal) internals the WA-Web-shaped status posts rely on (status-post.ts,
// status-key-memory.ts, devices.ts, status-prepare.ts): part of the registry (assumptions.ts spreads them into ASSUMPTIONS).
// The socket's own functions (getUSyncDevices, assertSessions, sendNode…) are made per socket by
// makeMessagesSocket/makeSocket, so, like `receipt-ack`, their checks read the installed file for the
// definition and its place in the returned socket; what a module exports or builds is looked at directly.

const MESSAGES_SEND = 'lib/Socket/messages-send.js'
const MESSAGES_RECV = 'lib/Socket/messages-recv.js'
const SOCKET = 'lib/Socket/socket.js'
const LIBSIGNAL = 'lib/Signal/libsignal.js'

/** an own LID device and its libsignal address, the way the status sender key is named under it */
const ME_LID = '100000000000009:3@lid'
const ME_LID_ADDRESS = '100000000000009_1.3'

export const STATUS_ASSUMPTIONS: readonly Assumption[] = [
  {
    name: 'usync-devices-lid',
    expects: 'the socket\'s getUSyncDevices(jids, useCache, ignoreZeroDevices) answers { jid, user, device } per device, and a requested LID user\'s devices as <user>:<device>@lid',
    source: '@whiskeysockets/baileys lib/Socket/messages-send.js (getUSyncDevices)',
    guard: 'test/statuses/lid-post.test.ts, test/statuses/lid-post-many.test.ts',
    check: (l) => inOrder(l.source(MESSAGES_SEND), 'const getUSyncDevices = async (jids, useCache, ignoreZeroDevices)', 'requestedLidUsers.add(user)',
      'const finalJid = isLidUser', '? jidEncode(user, item.server, item.device)', 'jid: finalJid', 'getUSyncDevices,')
  },
  {
    name: 'user-devices-cache',
    expects: 'the socket exposes the device cache getUSyncDevices reads as userDevicesCache, keyed by user, with get(user)',
    source: '@whiskeysockets/baileys lib/Socket/messages-send.js (userDevicesCache, getUSyncDevices)',
    // only a head start for the first chunk (sender.ts prepareSessions): nothing fails visibly without it
    guard: 'test/platform/compat.test.ts',
    check: (l) => inOrder(l.source(MESSAGES_SEND), 'const userDevicesCache = config.userDevicesCache ||', 'await userDevicesCache.get(user)', 'userDevicesCache,')
  },
  {
    name: 'assert-sessions',
    expects: 'the socket\'s assertSessions(jids, force) fetches pre-keys and sets up a Signal session for every device JID lacking one',
    source: '@whiskeysockets/baileys lib/Socket/messages-send.js (assertSessions)',
    guard: 'test/statuses/lid-post.test.ts',
    check: (l) => inOrder(l.source(MESSAGES_SEND), 'const assertSessions = async (jids, force)', 'signalRepository.validateSession(jid)', 'assertSessions,')
  },
  {
    name: 'send-node',
    expects: 'the socket\'s sendNode(node) encodes a stanza and writes it as it is',
    source: '@whiskeysockets/baileys lib/Socket/socket.js (sendNode)',
    guard: 'test/statuses/lid-post.test.ts',
    check: (l) => inOrder(l.source(SOCKET), 'const sendNode = (frame)', 'sendNode,')
  },
  {
    name: 'socket-key-store',
    expects: 'sock.authState.keys is the store addTransactionCapability wraps: get(type, ids), set(data) and transaction(work, key), nested transactions joining the outer one',
    source: '@whiskeysockets/baileys lib/Socket/socket.js (authState), lib/Utils/auth-utils.js (addTransactionCapability)',
    guard: 'test/statuses/lid-key-restart.test.ts, test/platform/status-shape.test.ts',
    check: (l) => {
      if (!isFunction(l.baileys.addTransactionCapability)) return false
      const keys = l.baileys.addTransactionCapability(emptyKeys, silentLogger, { maxCommitRetries: 1, delayBetweenTriesMs: 1 }) as Record<string, unknown>
      return isFunction(keys.get) && isFunction(keys.set) && isFunction(keys.transaction) &&
        inOrder(l.source(SOCKET), 'const keys = addTransactionCapability(authState.keys', 'authState: { creds, keys },')
    }
  },
  {
    name: 'sender-key-types',
    expects: "a sender key is stored in the 'sender-key' key type under its SenderKeyName string, and who holds a group's key in 'sender-key-memory' as { [group]: { [device JID]: true } }",
    source: '@whiskeysockets/baileys lib/Signal/libsignal.js (storeSenderKey), lib/Socket/messages-send.js (relayMessage)',
    guard: 'test/platform/status-shape.test.ts, test/statuses/lid-key-restart.test.ts',
    check: (l) => inOrder(l.source(LIBSIGNAL), 'storeSenderKey: async (senderKeyName, key)', 'const keyId = senderKeyName.toString()', "'sender-key': { [keyId]:") &&
      inOrder(l.source(MESSAGES_SEND), 'senderKeyMap[deviceJid] = true', "'sender-key-memory': { [jid]: senderKeyMap }")
  },
  {
    name: 'status-relay-ignores-key-memory',
    expects: "rc14's relayMessage never reads 'sender-key-memory' for status@broadcast (the LID post path keeps it there)",
    source: '@whiskeysockets/baileys lib/Socket/messages-send.js (relayMessage)',
    guard: 'test/statuses/lid-post.test.ts',
    check: (l) => inOrder(l.source(MESSAGES_SEND), 'if (!participant && !isStatus)', "authState.keys.get('sender-key-memory', [jid])")
  },
  {
    name: 'own-lid-account',
    expects: 'the credentials keep the own LID as creds.me.lid (set at pairing and on <success lid>) and the signed device identity as creds.account',
    source: '@whiskeysockets/baileys lib/Utils/validate-connection.js (configureSuccessfulPairing), lib/Socket/socket.js (CB:success)',
    guard: 'test/statuses/lid-post.test.ts',
    check: (l) => inOrder(l.source('lib/Utils/validate-connection.js'), 'const authUpdate = {', 'account,', 'me: { id: jid, name: bizName, lid }') &&
      l.source(SOCKET).includes('me: { ...authState.creds.me, lid: node.attrs.lid }')
  },
  {
    name: 'signal-encrypt',
    expects: "the signal repository's encryptGroupMessage({ group, meId, data }) answers { ciphertext, senderKeyDistributionMessage } and encryptMessage({ jid, data }) { type: 'pkmsg' | 'msg', ciphertext }",
    source: '@whiskeysockets/baileys lib/Signal/libsignal.js (makeLibSignalRepository)',
    guard: 'test/statuses/lid-post.test.ts',
    check: (l) => {
      const repo = signalRepositoryOf(l)
      return isFunction(repo?.encryptMessage) && isFunction(repo?.encryptGroupMessage) &&
        inOrder(l.source(LIBSIGNAL), 'async encryptMessage({ jid, data })', "const type = sigType === 3 ? 'pkmsg' : 'msg'", 'return { type, ciphertext:',
          'async encryptGroupMessage({ group, meId, data })', 'return { ciphertext, senderKeyDistributionMessage: skdm.serialize() }')
    }
  },
  {
    name: 'pre-key-query',
    expects: 'the socket\'s query(node, timeoutMs) sends an IQ and resolves with its answer (status-prepare.ts asks for pre-key bundles with it)',
    source: '@whiskeysockets/baileys lib/Socket/socket.js (query)',
    guard: 'test/statuses/lid-post-many.test.ts',
    check: (l) => inOrder(l.source(SOCKET), 'const query = async (node, timeoutMs)', 'query,')
  },
  {
    name: 'inject-e2e-sessions',
    expects: 'parseAndInjectE2ESessions(node, repository) is exported and sets up a Signal session from each bundle of an `encrypt` answer',
    source: '@whiskeysockets/baileys lib/Utils/signal.js (parseAndInjectE2ESessions)',
    guard: 'test/statuses/lid-post-many.test.ts',
    check: (l) => isFunction(l.baileys.parseAndInjectE2ESessions)
  },
  {
    name: 'validate-session',
    expects: 'the signal repository\'s validateSession(jid) answers { exists } for a device JID',
    source: '@whiskeysockets/baileys lib/Signal/libsignal.js (validateSession)',
    guard: 'test/statuses/lid-post-many.test.ts',
    check: (l) => isFunction(signalRepositoryOf(l)?.validateSession) && inOrder(l.source(LIBSIGNAL), 'async validateSession(jid)', 'return { exists:')
  },
  {
    name: 'signal-address',
    expects: "the signal repository's jidToSignalProtocolAddress(jid) is the string '<id>.<device>' (an LID user's id is '<user>_1')",
    source: '@whiskeysockets/baileys lib/Signal/libsignal.js (jidToSignalProtocolAddress); libsignal ProtocolAddress.toString',
    guard: 'test/platform/status-shape.test.ts',
    check: (l) => {
      const address = signalRepositoryOf(l)?.jidToSignalProtocolAddress
      return isFunction(address) && address(ME_LID) === ME_LID_ADDRESS && address('15550001:2@s.whatsapp.net') === '15550001.2'
    }
  },
  {
    name: 'sender-key-name',
    expects: "libsignal's SenderKeyName serialises as '<group>::<address id>::<device>' (the 'sender-key' key of the own status key)",
    source: '@whiskeysockets/baileys lib/Signal/Group/sender-key-name.js',
    guard: 'test/platform/status-shape.test.ts',
    check: (l) => {
      if (!isFunction(l.SenderKeyName)) return false
      const Name = l.SenderKeyName as unknown as new (group: string, sender: { id: string, deviceId: number }) => { toString: () => string }
      return new Name('status@broadcast', { id: '100000000000009_1', deviceId: 3 }).toString() === 'status@broadcast::100000000000009_1::3'
    }
  },
  {
    name: 'lid-lookup',
    expects: "the signal repository's lidMapping.getLIDsForPNs(pnJids) answers [{ pn, lid }] from the stored mapping, querying usync for the rest",
    source: '@whiskeysockets/baileys lib/Signal/lid-mapping.js (LIDMappingStore.getLIDsForPNs)',
    guard: 'test/statuses/lid-post.test.ts',
    check: (l) => {
      const lidMapping = signalRepositoryOf(l)?.lidMapping as Record<string, unknown> | undefined
      return isFunction(lidMapping?.getLIDsForPNs) && inOrder(l.source('lib/Signal/lid-mapping.js'), 'async getLIDsForPNs(pns)', '{ lid: deviceSpecificLid, pn }')
    }
  },
  {
    name: 'message-encoders',
    expects: 'Baileys exports encodeWAMessage(message) (the padded protobuf bytes) and encodeSignedDeviceIdentity(account, includeSignatureKey)',
    source: '@whiskeysockets/baileys lib/Utils/generics.js (encodeWAMessage), lib/Utils/validate-connection.js (encodeSignedDeviceIdentity), exported by its index',
    guard: 'test/statuses/lid-post.test.ts',
    check: (l) => isFunction(l.baileys.encodeWAMessage) && isFunction(l.baileys.encodeSignedDeviceIdentity) &&
      l.baileys.encodeWAMessage({ conversation: 'x' }) instanceof Uint8Array
  },
  {
    name: 'identity-change-notification',
    expects: "a contact's identity change arrives as <notification type=\"encrypt\" from=USER> with an <identity> child (dispatched as 'CB:notification,type:encrypt'), which Baileys handles itself",
    source: '@whiskeysockets/baileys lib/Socket/messages-recv.js (handleEncryptNotification), lib/Utils/identity-change-handler.js',
    guard: 'test/platform/status-shape.test.ts',
    check: (l) => inOrder(l.source(MESSAGES_RECV), 'const handleEncryptNotification = async (node)', 'handleIdentityChange(node', "case 'encrypt':", 'await handleEncryptNotification(node)') &&
      l.source('lib/Utils/identity-change-handler.js').includes("getBinaryNodeChild(node, 'identity')")
  },
  {
    name: 'retry-receipt-relay',
    expects: "rc14 answers a <receipt type=\"retry\"> only from its CB:receipt handler (handleReceipt → sendMessagesAgain, which re-relays a status pairwise to the requesting device and clears sender-key-memory only for groups), so a receipt held back in the 'frame' listener is not answered twice",
    source: '@whiskeysockets/baileys lib/Socket/messages-recv.js (handleReceipt, sendMessagesAgain)',
    guard: 'test/statuses/status-retry-e2e.test.ts',
    check: (l) => inOrder(l.source(MESSAGES_RECV), 'const sendMessagesAgain = async (key, ids, retryNode, receiptNode)', 'if (isJidGroup(remoteJid))', "'sender-key-memory': { [remoteJid]: null }",
      'msgRelayOpts.participant = {', 'await relayMessage(key.remoteJid, msg, msgRelayOpts)', 'const handleReceipt = async (node)', "if (attrs.type === 'retry')",
      'await sendMessagesAgain(key, ids, retryNode, node)', "ws.on('CB:receipt'")
  },
  {
    name: 'retry-receipt-keys',
    expects: "Baileys exports extractE2ESessionFromRetryReceipt(receipt) (the <keys> bundle of a retry receipt, null without one) and the signal repository's injectE2ESession({ jid, session }) sets up a session from it",
    source: '@whiskeysockets/baileys lib/Utils/signal.js (extractE2ESessionFromRetryReceipt), lib/Signal/libsignal.js (injectE2ESession)',
    guard: 'test/statuses/status-retry-e2e.test.ts',
    check: (l) => {
      const extract = l.baileys.extractE2ESessionFromRetryReceipt
      return isFunction(extract) && extract({ tag: 'receipt', attrs: {}, content: [] }) === null &&
        isFunction(signalRepositoryOf(l)?.injectE2ESession) && inOrder(l.source(LIBSIGNAL), 'async injectE2ESession({ jid, session })')
    }
  },
  {
    name: 'lid-for-pn',
    expects: "the signal repository's lidMapping.getLIDForPN(pnDeviceJid) answers the LID device JID (the phone number's device kept), null when no LID is known",
    source: '@whiskeysockets/baileys lib/Signal/lid-mapping.js (LIDMappingStore.getLIDForPN)',
    guard: 'test/statuses/status-retry-e2e.test.ts',
    check: (l) => {
      const lidMapping = signalRepositoryOf(l)?.lidMapping as Record<string, unknown> | undefined
      return isFunction(lidMapping?.getLIDForPN) && inOrder(l.source('lib/Signal/lid-mapping.js'), 'async getLIDForPN(pn)', 'return (await this.getLIDsForPNs([pn]))?.[0]?.lid || null',
        'const pnDevice = decoded.device', '`${normalizedLidUser}${!!pnDevice ? `:${pnDevice}` : ``}@')
    }
  },
  {
    name: 'error-ack-update',
    expects: 'an <ack class="message" error=…> becomes messages.update with status ERROR and the error as messageStubParameters[0] (handleBadAck)',
    source: '@whiskeysockets/baileys lib/Socket/messages-recv.js (handleBadAck)',
    guard: 'test/platform/platform.test.ts',
    check: (l) => inOrder(l.source(MESSAGES_RECV), 'const handleBadAck = async ({ attrs })', 'if (attrs.error)', "ev.emit('messages.update'", 'status: WAMessageStatus.ERROR',
      'messageStubParameters: isReachoutTimelocked ? [attrs.error, ACCOUNT_RESTRICTED_TEXT] : [attrs.error]', "ws.on('CB:ack,class:message'", 'handleBadAck(node)')
  }
]
