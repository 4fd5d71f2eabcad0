import type { proto } from '@whiskeysockets/baileys'

// The attributes of a status stanza that depend on what it carries, as WhatsApp Web sets them
// (whatsapp-rust wacore/src/send/classify.rs stanza_type_from_message and media_type_from_message, which
// mirror WA Web's typeAttributeFromProtobuf). `message` is the normalized content (no wrappers).

const hasMatchedText = (m: proto.IMessage): boolean => typeof m.extendedTextMessage?.matchedText === 'string' && m.extendedTextMessage.matchedText !== ''

/** The `type` attribute of `<message>`: a plain text status is "text", a link preview or any media "media". */
export function statusStanzaType (m: proto.IMessage): 'text' | 'media' | 'reaction' {
  if (m.reactionMessage != null) return 'reaction'
  if (m.protocolMessage != null) return 'text'
  if (m.extendedTextMessage != null) return hasMatchedText(m) ? 'media' : 'text'
  if (m.conversation != null) return 'text'
  return 'media'
}

/** The `mediatype` attribute of the skmsg `<enc>`; none for a text status or a revoke. */
export function statusMediaType (m: proto.IMessage): string | undefined {
  if (m.imageMessage != null) return 'image'
  if (m.videoMessage != null) return m.videoMessage.gifPlayback === true ? 'gif' : 'video'
  if (m.ptvMessage != null) return 'ptv'
  if (m.audioMessage != null) return m.audioMessage.ptt === true ? 'ptt' : 'audio'
  if (m.extendedTextMessage != null) return hasMatchedText(m) ? 'url' : undefined
  return undefined
}
