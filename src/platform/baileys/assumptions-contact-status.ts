import type { Assumption } from './assumption.js'
import { inOrder, isFunction } from './check-helpers.js'

// The Baileys internals contacts' statuses rely on (status-stanza.ts, ../contact-statuses.ts): part of the
// registry (assumptions.ts spreads them into ASSUMPTIONS).

const MESSAGES_RECV = 'lib/Socket/messages-recv.js'
const DECODE = 'lib/Utils/decode-wa-message.js'
const E2E = 'test/statuses/contact-statuses-e2e.test.ts'

export const CONTACT_STATUS_ASSUMPTIONS: readonly Assumption[] = [
  {
    name: 'status-stanza-unhandled',
    expects: "Baileys registers no handler for a top-level <status> stanza (no 'CB:status' listener): it neither decrypts nor acks one, so the service's own handling is the only one",
    source: '@whiskeysockets/baileys lib/Socket/messages-recv.js (the ws.on(\'CB:…\') handlers)',
    guard: E2E,
    check: (l) => {
      const recv = l.source(MESSAGES_RECV)
      return recv.includes("ws.on('CB:message'") && !/ws\.on\(['"`]CB:status/.test(recv) && !/ws\.on\(['"`]CB:status/.test(l.source('lib/Socket/socket.js'))
    }
  },
  {
    name: 'status-stanza-decrypt',
    expects: 'decryptMessageNode(stanza, meId, meLid, repository, logger) decodes a status@broadcast stanza with its participant as author and its decrypt() processes a sender key distribution (pkmsg) before the skmsg is read, marking a failure as a CIPHERTEXT stub with the error as messageStubParameters[0]',
    source: '@whiskeysockets/baileys lib/Utils/decode-wa-message.js (decodeMessageNode, decryptMessageNode), exported by its index',
    guard: `${E2E}, test/durability/contact-status-commit.test.ts`,
    check: (l) => isFunction(l.baileys.decryptMessageNode) &&
      inOrder(l.source(DECODE), 'if (isJidStatusBroadcast(from))', 'author = participant',
        'export const decryptMessageNode = (stanza, meId, meLid, repository, logger)', "case 'skmsg':", 'await repository.decryptGroupMessage({',
        'if (msg.senderKeyDistributionMessage)', 'await repository.processSenderKeyDistributionMessage({',
        'fullMessage.messageStubType = proto.WebMessageInfo.StubType.CIPHERTEXT', 'fullMessage.messageStubParameters = [err.message.toString()]')
  },
  {
    name: 'group-status-decrypt',
    expects: 'decryptMessageNode decodes a stanza from a group JID with its participant as author and the group as chat, and reads its skmsg with the sender key of (group, author): a group status (`<status from=group>`, retagged message) decrypts like a group message',
    source: '@whiskeysockets/baileys lib/Utils/decode-wa-message.js (decodeMessageNode: the isJidGroup(from) branch; decryptMessageNode: skmsg)',
    guard: 'test/statuses/mentions-e2e.test.ts',
    check: (l) => inOrder(l.source(DECODE), 'else if (isJidGroup(from)) {', 'author = participant;', 'chatId = from;', "case 'skmsg':", 'group: sender,', 'authorJid: author,')
  },
  {
    name: 'relay-additional-nodes',
    expects: 'relayMessage(jid, message, { additionalNodes }) appends the given nodes to the message stanza it writes (the status mention message\'s <meta is_status_mention>)',
    source: '@whiskeysockets/baileys lib/Socket/messages-send.js (relayMessage)',
    guard: 'test/statuses/mentions-e2e.test.ts',
    check: (l) => inOrder(l.source('lib/Socket/messages-send.js'), 'const relayMessage = async (jid, message, { messageId: msgId, participant, additionalAttributes, additionalNodes',
      'if (additionalNodes && additionalNodes.length > 0) {', 'stanza.content.push(...additionalNodes);')
  },
  {
    name: 'media-download-host',
    expects: 'downloadContentFromMessage({ mediaKey, directPath, url }, type, opts) fetches directPath from opts.host (else the host of url) and streams the decrypted bytes',
    source: '@whiskeysockets/baileys lib/Utils/messages-media.js (downloadContentFromMessage)',
    guard: E2E,
    check: (l) => isFunction(l.baileys.downloadContentFromMessage) &&
      inOrder(l.source('lib/Utils/messages-media.js'), 'export const downloadContentFromMessage = async ({ mediaKey, directPath, url }, type, opts = {})',
        'const fallbackHost = opts.host ?? extractHost(url)', 'getUrlFromDirectPath(directPath, fallbackHost)', 'return downloadEncryptedContent(downloadUrl, keys, opts)')
  }
]
