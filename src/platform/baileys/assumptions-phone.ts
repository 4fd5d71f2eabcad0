import type { Assumption } from './assumption.js'
import { inOrder, isFunction } from './check-helpers.js'

// The Baileys internals the phone's contacts and status privacy rely on (app-state.ts, session/phone.ts): part
// of the registry (assumptions.ts spreads them into ASSUMPTIONS). rc14 turns app-state sync into events; what
// the service needs from it (a sync from scratch on demand, how a removed contact shows, when a key arrived)
// is behaviour with no shape, so the checks read the installed files for the lines it comes from.

const CHATS = 'lib/Socket/chats.js'
const CHAT_UTILS = 'lib/Utils/chat-utils.js'
const GUARD = 'test/contacts/e2e.test.ts'

export const PHONE_ASSUMPTIONS: readonly Assumption[] = [
  {
    name: 'app-state-resync',
    expects: "the socket's resyncAppState(collections, isInitialSync) reads each collection's version from the 'app-state-sync-version' keys inside a key-store transaction keyed by creds.me.id, asks for a snapshot when none is stored, stores the new version and then hands every mutation decoded to processSyncAction",
    source: '@whiskeysockets/baileys lib/Socket/chats.js (resyncAppState)',
    guard: GUARD,
    check: (l) => inOrder(l.source(CHATS), 'const resyncAppState = ev.createBufferedFunction(async (collections, isInitialSync) => {',
      'await authState.keys.transaction(async () => {', "authState.keys.get('app-state-sync-version', [name])", 'return_snapshot: (shouldForceSnapshot || !state.version).toString()',
      "authState.keys.set({ 'app-state-sync-version': { [name]: newState } })", "}, authState?.creds?.me?.id || 'resync-app-state');", 'onMutation(globalMutationMap[key]);', 'resyncAppState,')
  },
  {
    name: 'contact-action-upsert',
    expects: 'a contact (or lid_contact) app-state action becomes contacts.upsert [{ id, name: fullName || firstName || username, lid: lidJid, phoneNumber }], and no operation reaches processSyncAction: a REMOVE (an all-absent contactAction) is an upsert with no name',
    source: '@whiskeysockets/baileys lib/Utils/chat-utils.js (decodeSyncdMutations, processSyncAction), lib/Utils/sync-action-utils.js (processContactAction)',
    guard: GUARD,
    check: (l) => inOrder(l.source(CHAT_UTILS), 'onMutation({ syncAction, index: JSON.parse(indexStr) });', 'else if (action?.contactAction) {',
      'processContactAction(action.contactAction, id, logger)', 'else if (action?.lidContactAction) {', "ev.emit('contacts.upsert', [") &&
      inOrder(l.source('lib/Utils/sync-action-utils.js'), "event: 'contacts.upsert',", 'name: action.fullName || action.firstName || action.username || undefined,', 'lid: lidJid || undefined,', 'phoneNumber')
  },
  {
    name: 'status-privacy-setting',
    expects: "a statusPrivacy app-state action becomes settings.update { setting: 'statusPrivacy', value: { mode, userJid } }",
    source: '@whiskeysockets/baileys lib/Utils/chat-utils.js (processSyncAction)',
    guard: GUARD,
    check: (l) => inOrder(l.source(CHAT_UTILS), 'else if (action?.statusPrivacy) {', "ev.emit('settings.update', { setting: 'statusPrivacy', value: action.statusPrivacy });")
  },
  {
    name: 'app-state-key-share',
    expects: "the phone's APP_STATE_SYNC_KEY_SHARE is stored as 'app-state-sync-key' and then announced as creds.update { myAppStateKeyId }, which the socket copies into its creds",
    source: '@whiskeysockets/baileys lib/Utils/process-message.js (APP_STATE_SYNC_KEY_SHARE), lib/Socket/socket.js (creds.update)',
    guard: GUARD,
    check: (l) => inOrder(l.source('lib/Utils/process-message.js'), 'case proto.Message.ProtocolMessage.Type.APP_STATE_SYNC_KEY_SHARE:',
      "await keyStore.set({ 'app-state-sync-key': { [strKeyId]: keyData } });", "ev.emit('creds.update', { myAppStateKeyId: newAppStateSyncKeyId });") &&
      l.source('lib/Socket/socket.js').includes('Object.assign(creds, update);')
  },
  {
    name: 'server-sync-notification',
    expects: "rc14 answers <notification type=\"server_sync\"> itself with resyncAppState([its first collection's name], false)",
    source: '@whiskeysockets/baileys lib/Socket/messages-recv.js (processNotification)',
    guard: GUARD,
    check: (l) => inOrder(l.source('lib/Socket/messages-recv.js'), "case 'server_sync':", "getBinaryNodeChild(node, 'collection')", 'await resyncAppState([name], false);')
  },
  {
    name: 'event-buffer-flush',
    expects: "sock.ev.flush() hands every buffered event to the listeners before it returns (one 'event' emit, re-emitted per event name)",
    source: '@whiskeysockets/baileys lib/Utils/event-buffer.js (makeEventBuffer)',
    guard: GUARD,
    check: (l) => isFunction(l.baileys.makeEventBuffer) &&
      inOrder(l.source('lib/Utils/event-buffer.js'), "ev.on('event', (map) => {", 'ev.emit(event, map[event]);', 'function flush() {', "ev.emit('event', consolidatedData);", 'flush,')
  }
]
