import type { Assumption } from './assumption.js'
import { STATUS_ASSUMPTIONS } from './assumptions-status.js'
import { PHONE_ASSUMPTIONS } from './assumptions-phone.js'
import { CONTACT_STATUS_ASSUMPTIONS } from './assumptions-contact-status.js'
import { PreKeyManager } from '@whiskeysockets/baileys/lib/Utils/pre-key-manager.js'
import { getter, inOrder, isFunction, method, signalRepositoryOf } from './check-helpers.js'

export type { Assumption }

// THE REGISTRY of what the service assumes about Baileys' (and ws', libsignal's) internals. Each entry: a
// name, what it expects, the file it comes from, the test that guards the behaviour built on it, and a
// check run at start against the installed copies (compat.ts). To rely on one more internal: add an entry
// here (and a breaker in test/platform/compat.test.ts, and a row in UPGRADING.md); the code using it
// lives in this folder behind a named function.

export const ASSUMPTIONS: readonly Assumption[] = [
  {
    name: 'frame-event-first',
    expects: "every decoded stanza is emitted on sock.ws as 'frame' before any CB: event, and its tag is read only after the 'frame' listeners returned",
    source: '@whiskeysockets/baileys lib/Socket/socket.js (onMessageReceived)',
    guard: 'test/platform/receipt-turns.test.ts',
    check: (l) => inOrder(l.source('lib/Socket/socket.js'), "ws.emit('frame', frame)", 'const l0 = frame.tag', '${DEF_CALLBACK_PREFIX}${l0}')
  },
  {
    name: 'callback-event-prefix',
    expects: "stanzas are dispatched on sock.ws as 'CB:<tag>,<attr>:<value>,<child>' events (DEF_CALLBACK_PREFIX is 'CB:')",
    source: '@whiskeysockets/baileys lib/Defaults/index.js (DEF_CALLBACK_PREFIX), lib/Socket/socket.js',
    guard: 'test/platform/link-attempts.test.ts',
    check: (l) => l.baileys.DEF_CALLBACK_PREFIX === 'CB:'
  },
  {
    name: 'receipt-ack',
    expects: "the socket's sendMessageAck(node) sends the <ack> rc14's handleReceipt sends in its finally, which is the only ack of a receipt",
    source: '@whiskeysockets/baileys lib/Socket/messages-recv.js (sendMessageAck, handleReceipt)',
    guard: 'test/platform/receipt-turns.test.ts, test/durability/receipts-sigkill.test.ts',
    check: (l) => inOrder(l.source('lib/Socket/messages-recv.js'), 'const sendMessageAck = async (node', 'const handleReceipt = async', 'finally', 'await sendMessageAck(node)', 'sendMessageAck,')
  },
  {
    name: 'ws-client-socket',
    expects: "Baileys' WebSocketClient creates a ws WebSocket as `this.socket` in connect() and writes every frame with `this.socket.send(data, cb)`; `isOpen` is a getter",
    source: '@whiskeysockets/baileys lib/Socket/Client/websocket.js (WebSocketClient)',
    guard: 'test/db/postgres-send-gate.test.ts',
    check: (l) => {
      const connect = method(l.WebSocketClient, 'connect')
      const send = method(l.WebSocketClient, 'send')
      return connect !== undefined && send !== undefined && getter(l.WebSocketClient, 'isOpen') &&
        connect.toString().includes('this.socket = new WebSocket(') && send.toString().includes('this.socket?.send(')
    }
  },
  {
    name: 'ws-raw-socket',
    expects: 'the ws WebSocket Baileys loads has send(data, cb) and terminate(), and keeps its TCP socket as `_socket`',
    source: 'ws lib/websocket.js (WebSocket.setSocket), loaded by @whiskeysockets/baileys',
    guard: 'test/db/postgres-send-gate.test.ts, test/platform/receipt-turns.test.ts',
    check: (l) => method(l.WebSocket, 'send') !== undefined && method(l.WebSocket, 'terminate') !== undefined &&
      (method(l.WebSocket, 'setSocket')?.toString().includes('this._socket = socket') ?? false)
  },
  {
    name: 'pending-queries-on-error',
    expects: "end() removes the 'close' listeners pending queries wait on, and those queries also settle on an 'error' event of sock.ws",
    source: '@whiskeysockets/baileys lib/Socket/socket.js (waitForMessage, end)',
    // nothing observable fails without it (closing just waits out Baileys' 60 s query timeouts): the check alone guards it
    guard: 'test/platform/compat.test.ts',
    check: (l) => inOrder(l.source('lib/Socket/socket.js'), "ws.on('error', onErr)", 'const end = async', "ws.removeAllListeners('close')")
  },
  {
    name: 'signal-repository',
    expects: "the socket config's makeSignalRepository(auth, logger, pnToLid) builds a repository with decryptMessage({ jid, type, ciphertext }) and lidMapping.storeLIDPNMappings(pairs)",
    source: '@whiskeysockets/baileys lib/Defaults/index.js (DEFAULT_CONNECTION_CONFIG), lib/Signal/libsignal.js',
    guard: 'test/statuses/interactions-e2e.test.ts, test/platform/receipt-turns.test.ts',
    check: (l) => {
      const repo = signalRepositoryOf(l) as { decryptMessage?: unknown, lidMapping?: { storeLIDPNMappings?: unknown } } | undefined
      return isFunction(repo?.decryptMessage) && isFunction(repo?.lidMapping?.storeLIDPNMappings)
    }
  },
  {
    name: 'decrypt-in-key-transaction',
    expects: "the socket hands makeSignalRepository a key store with transaction(work, key) (addTransactionCapability), and a message's delivery receipt goes out only after decrypt() awaited decryptMessage and unpadded the plaintext",
    source: '@whiskeysockets/baileys lib/Socket/socket.js (addTransactionCapability), lib/Utils/decode-wa-message.js, lib/Socket/messages-recv.js (handleMessage)',
    guard: 'test/durability/replies-sigkill.test.ts',
    check: (l) => isFunction(l.baileys.addTransactionCapability) && isFunction(l.baileys.unpadRandomMax16) &&
      inOrder(l.source('lib/Socket/socket.js'), 'addTransactionCapability(authState.keys', 'makeSignalRepository({ creds, keys }') &&
      inOrder(l.source('lib/Utils/decode-wa-message.js'), 'await repository.decryptMessage({', 'unpadRandomMax16(msgBuffer)') &&
      inOrder(l.source('lib/Socket/messages-recv.js'), 'const handleMessage = async', 'await decrypt()', 'sendReceipt')
  },
  {
    name: 'shared-key-transactions',
    expects: 'makeSocket wraps authState.keys once with addTransactionCapability (one AsyncLocalStorage, entered only by transaction()) into the object it hands makeSignalRepository and exposes as sock.authState.keys, whose get/set/isInTransaction/transaction are looked up at each call; pre-keys go through PreKeyManager',
    source: '@whiskeysockets/baileys lib/Socket/socket.js (makeSocket), lib/Utils/auth-utils.js (addTransactionCapability), lib/Utils/pre-key-manager.js',
    guard: 'test/platform/key-transactions.test.ts',
    check: (l) => {
      const socket = l.source('lib/Socket/socket.js')
      const utils = l.source('lib/Utils/auth-utils.js')
      const proto = (PreKeyManager as unknown as { prototype: Record<string, unknown> }).prototype
      return socket.split('addTransactionCapability(').length === 2 &&
        inOrder(socket, 'const keys = addTransactionCapability(authState.keys, logger, transactionOpts)', 'makeSignalRepository({ creds, keys }') &&
        inOrder(utils, 'const txStorage = new AsyncLocalStorage()', 'return {', 'get: async (type, ids)', 'set: async (data)', 'isInTransaction,',
          'transaction: async (work, key)', 'return work()', 'await txStorage.run(ctx, work)', 'await commitWithRetry(ctx.mutations)') &&
          utils.split('txStorage.run(').length === 2 && isFunction(proto.processOperations) && isFunction(proto.validateDeletions)
    }
  },
  {
    name: 'lid-mapping-keys',
    expects: "LID ↔ number pairs are stored in the 'lid-mapping' key type: '<pn user>' → LID user and '<lid user>_reverse' → pn user",
    source: '@whiskeysockets/baileys lib/Signal/lid-mapping.js (LIDMappingStore.storeLIDPNMappings)',
    guard: 'test/db/auth-state.test.ts, test/platform/receipt-turns.test.ts',
    check: (l) => inOrder(l.source('lib/Signal/lid-mapping.js'), 'batchData[pnUser] = lidUser', 'batchData[`${lidUser}_reverse`] = pnUser', "'lid-mapping': batchData")
  },
  {
    name: 'noise-trust-root',
    expects: "the platform's Noise certificate root is the mutable 32-byte buffer WA_CERT_DETAILS.PUBLIC_KEY (overwritten only by WA_TEST_TRUST_ROOT, in tests)",
    source: '@whiskeysockets/baileys lib/Defaults/index.js (WA_CERT_DETAILS)',
    guard: 'test/platform/platform.test.ts',
    check: (l) => {
      const details = l.baileys.WA_CERT_DETAILS as { PUBLIC_KEY?: unknown } | undefined
      return details?.PUBLIC_KEY instanceof Uint8Array && details.PUBLIC_KEY.length === 32 && !Object.isFrozen(details.PUBLIC_KEY)
    }
  },
  {
    name: 'libsignal-curve',
    expects: "Baileys does its Curve25519 work through libsignal's src/curve.js (the file patches/libsignal+6.0.0.patch changes), which exports generateKeyPair, calculateAgreement, calculateSignature and verifySignature",
    source: '@whiskeysockets/baileys lib/Utils/crypto.js (import of libsignal/src/curve.js); libsignal src/curve.js',
    guard: 'test/platform/libsignal-patch.test.ts',
    check: (l) => l.source('lib/Utils/crypto.js').includes("from 'libsignal/src/curve.js'") &&
      ['generateKeyPair', 'calculateAgreement', 'calculateSignature', 'verifySignature'].every((name) => isFunction(l.curve[name]))
  },
  // the internals the WA-Web-shaped status posts rely on (status-post.ts, status-key-memory.ts, devices.ts)
  ...STATUS_ASSUMPTIONS,
  // the phone's contacts and status privacy (app-state.ts, session/phone.ts)
  ...PHONE_ASSUMPTIONS,
  // contacts' statuses, delivered as <status> stanzas (status-stanza.ts, ../contact-statuses.ts)
  ...CONTACT_STATUS_ASSUMPTIONS
]
