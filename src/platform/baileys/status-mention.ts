import { getBinaryNodeChild, getBinaryNodeChildren, jidNormalizedUser, proto, type BinaryNode, type WASocket } from '@whiskeysockets/baileys'
import { STATUS_JID } from '../../jid.js'
import type { PlatformLogger as Logger } from '../logger.js'

// Status mentions (issue 39), as WA Web makes them (builds after 2026-08-12):
//
// - The post names the users in its `<meta>`: `<meta status_setting=…><mentioned_users><to jid="USER@lid"/>…`,
//   one to five of them (WA Web's publish schema WASmaxOutStatusPublishStatusEncMentionedUsersMixin:
//   `REPEATED_CHILD(<to jid/>, 1, 5)`; the deliver side, WASmaxInStatusDeliverStatusEncMentionedUsersMixin, reads the
//   same bounds with LID user JIDs). Every chunk of a post carries the same list (one post, one id).
// - Each mentioned user is told by a one-to-one message in the chat with the poster: `statusMentionMessage`
//   (a FutureProofMessage, field 87 of rc14's WAProto.proto) around `protocolMessage { key: the status' key,
//   type: STATUS_MENTION_MESSAGE (25) }`, its stanza marked `<meta is_status_mention="true"/>`
//   (WASmaxOutStatusPublishStatusEncMentionMessageMixin). WA Web renders it as subtype `status_mention_message`
//   quoting the status (WAWebStatusMentionRenderMsg.react); tulir/whatsmeow's msgconv reads it as "Mentioned you in
//   their status". Sent with Baileys' relayMessage (public API), after the post was accepted.
// - A contact's status that mentions the account: the `<status>` stanza's `<meta status_mentioned="true">`
//   (WASmaxInStatusDeliverStatusEncMentionedMixin; WAWebHandleMsgParser reads `meta.maybeAttrString
//   ("status_mentioned") === "true"`), or the account's own LID or number among its `<mentioned_users>`.

/** At most five users a status names (WA Web's publish schema). */
export const MAX_STATUS_MENTIONS = 5

/** The `content` of the post's `<meta>` when it mentions anyone: `<mentioned_users><to jid/>…`. */
export function mentionedUsersContent (mentioned: string[] | undefined): { content?: BinaryNode[] } {
  if (mentioned === undefined || mentioned.length === 0) return {}
  return { content: [{ tag: 'mentioned_users', attrs: {}, content: mentioned.map((jid): BinaryNode => ({ tag: 'to', attrs: { jid } })) }] }
}

/** The status mention message WA Web sends the mentioned user (see above). */
export function statusMentionMessage (statusId: string): proto.IMessage {
  return {
    statusMentionMessage: {
      message: {
        protocolMessage: {
          key: { remoteJid: STATUS_JID, fromMe: true, id: statusId },
          type: proto.Message.ProtocolMessage.Type.STATUS_MENTION_MESSAGE
        }
      }
    }
  }
}

/**
 * Tells each mentioned user (`jids`: their LID user JIDs on an LID-migrated account, else phone-number JIDs) of
 * the status `statusId`; the JIDs the platform took the message for. A failure is logged: the post stands.
 */
export async function sendStatusMentions (sock: WASocket, statusId: string, jids: string[], logger: Logger): Promise<string[]> {
  const told: string[] = []
  for (const jid of jids) {
    try {
      await sock.relayMessage(jid, statusMentionMessage(statusId), {
        additionalNodes: [{ tag: 'meta', attrs: { is_status_mention: 'true' } }]
      })
      told.push(jid)
    } catch (err) {
      logger.warn({ err, statusId }, 'could not send a status mention message; the status itself went out')
    }
  }
  return told
}

/** Whether a contact's `<status>` stanza mentions the account (`own`: its phone-number and LID user JIDs). */
export function mentionsOwnAccount (frame: BinaryNode, own: Array<string | null | undefined>): boolean {
  const mine = new Set(own.filter((j): j is string => typeof j === 'string' && j !== '').map((j) => jidNormalizedUser(j)))
  for (const meta of getBinaryNodeChildren(frame, 'meta')) {
    if (meta.attrs.status_mentioned === 'true') return true
    const named = getBinaryNodeChildren(getBinaryNodeChild(meta, 'mentioned_users'), 'to')
    if (named.some((to) => mine.has(jidNormalizedUser(to.attrs.jid ?? '')) || mine.has(jidNormalizedUser(to.attrs.peer_pn_jid ?? '')))) return true
  }
  return false
}
