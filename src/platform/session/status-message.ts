import { randomBytes } from 'node:crypto'
import { extname } from 'node:path'
import { prepareWAMessageMedia, proto, type WAMediaUploadFunction } from '@whiskeysockets/baileys'
import { mediaTypeOfExtension } from '../../media/types.js'
import { STATUS_JID } from '../../jid.js'
import type { PlatformLogger as Logger } from '../logger.js'
import type { StatusContent } from '../types.js'

/** `#RRGGBB` (opaque) or `#AARRGGBB` → the unsigned ARGB integer WhatsApp stores. */
export function argbFromHex (color: string): number {
  const m = /^#?([0-9a-f]{6}|[0-9a-f]{8})$/i.exec(color.trim())
  if (m === null) throw new Error(`invalid colour ${JSON.stringify(color)}: expected #RRGGBB or #AARRGGBB`)
  const hex = m[1].length === 6 ? `ff${m[1]}` : m[1]
  return Number.parseInt(hex, 16) >>> 0
}

/**
 * The mimetype of image or video media given without one, from its name's extension through the service's one
 * table (src/media/types.ts); undefined (Baileys' default for the kind) when the extension names no such type.
 */
export function mimetypeOf (kind: 'image' | 'video', source: { path: string } | { url: string }): string | undefined {
  const name = 'path' in source ? source.path : new URL(source.url).pathname
  const type = mediaTypeOfExtension(extname(name).slice(1))
  return type?.kind === kind ? type.mimeType : undefined
}

/**
 * A status carries `messageContextInfo.messageSecret` (32 random bytes), as WA Web's do: whatsapp-rust sends
 * every status through wacore/src/send/group.rs prepare_group_stanza, which mints a message secret for every
 * message with reportable fields (wacore/src/reporting_token.rs REPORTING_FIELDS: extendedTextMessage,
 * imageMessage, videoMessage, protocolMessage…) and splices `messageContextInfo { messageSecret }` onto the
 * plaintext ("matching WA Web (the reporting token derives from messageSecret)"); rc14's own
 * generateWAMessageContent adds one the same way (lib/Utils/messages.js). It is part of the message the
 * service stores for the status (`onPrepared`), so a resumed send and a retry answer carry the same secret.
 * Reactions to a status do not use it: whatsapp-rust src/features/reaction.rs sends a status reaction as a
 * plain reactionMessage (only a Community Announcement Group's reactions are encrypted with the secret).
 * The `<reporting>` token whatsapp-rust derives from it is not sent (neither does this service's stanza
 * carry one: see docs/platform.md).
 */
function withMessageSecret (message: proto.IMessage): proto.IMessage {
  message.messageContextInfo = { ...message.messageContextInfo, messageSecret: randomBytes(32) }
  return message
}

/** Builds the status message once; image/video/audio media is encrypted and uploaded here, once. */
export async function buildStatusMessage (content: StatusContent, upload: WAMediaUploadFunction, logger: Logger): Promise<proto.IMessage> {
  if (content.kind === 'text') {
    return withMessageSecret(proto.Message.fromObject({
      extendedTextMessage: {
        text: content.text,
        ...(content.backgroundColor !== undefined ? { backgroundArgb: argbFromHex(content.backgroundColor) } : {}),
        ...(content.font !== undefined ? { font: content.font } : {})
      }
    }))
  }
  const url = 'path' in content.source ? content.source.path : content.source.url
  if (content.kind === 'audio') {
    // an audioMessage as WA Web builds one (whatsapp-rust src/media.rs audio_message): mimetype, seconds, ptt
    // for a voice note; `seconds` given, so Baileys does not parse the file again for it
    const audio = { audio: { url }, mimetype: content.mimetype, ptt: content.ptt, ...(content.seconds !== undefined ? { seconds: content.seconds } : {}) }
    return await prepareWAMessageMedia(audio, { upload, logger, mediaUploadTimeoutMs: 60_000 })
  }
  const mimetype = content.mimetype ?? mimetypeOf(content.kind, content.source)
  const common = { caption: content.caption, ...(mimetype !== undefined ? { mimetype } : {}) }
  const media = content.kind === 'image'
    ? { image: { url }, ...common }
    : { video: { url }, ...common }
  return withMessageSecret(await prepareWAMessageMedia(media, { upload, logger, mediaUploadTimeoutMs: 60_000 }))
}

/** Revokes (deletes for everyone) one of our statuses. */
export function revokeMessage (messageId: string): proto.IMessage {
  return withMessageSecret(proto.Message.fromObject({
    protocolMessage: {
      key: { remoteJid: STATUS_JID, fromMe: true, id: messageId },
      type: proto.Message.ProtocolMessage.Type.REVOKE
    }
  }))
}
