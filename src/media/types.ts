export type MediaKind = 'image' | 'video' | 'audio'

/** A media type the service accepts. */
export interface MediaType {
  kind: MediaKind
  mimeType: string
  /** canonical extension, lower case, without the dot */
  ext: string
}

const image = (ext: string, mimeType: string): MediaType => ({ kind: 'image', mimeType, ext })
const video = (ext: string, mimeType: string): MediaType => ({ kind: 'video', mimeType, ext })
const audio = (ext: string, mimeType: string): MediaType => ({ kind: 'audio', mimeType, ext })

/**
 * The one extension → MIME table: every media type the service accepts, by canonical extension. Its MIME type
 * is what the platform is told (the media message's `mimetype`), as well as what an upload answers and stores.
 */
export const MEDIA_TYPES = {
  jpg: image('jpg', 'image/jpeg'),
  png: image('png', 'image/png'),
  gif: image('gif', 'image/gif'),
  webp: image('webp', 'image/webp'),
  bmp: image('bmp', 'image/bmp'),
  mp4: video('mp4', 'video/mp4'),
  // M4V is an MP4 file under Apple's brand: the platform is told video/mp4, the type WhatsApp clients send and
  // rc14 defaults a video to (lib/Utils/messages.js MIMETYPE_MAP), not the unregistered video/x-m4v
  m4v: video('m4v', 'video/mp4'),
  mov: video('mov', 'video/quicktime'),
  '3gp': video('3gp', 'video/3gpp'),
  '3g2': video('3g2', 'video/3gpp2'),
  webm: video('webm', 'video/webm'),
  mkv: video('mkv', 'video/x-matroska'),
  avi: video('avi', 'video/x-msvideo'),
  flv: video('flv', 'video/x-flv'),
  wmv: video('wmv', 'video/x-ms-wmv'),
  // OGG only with Opus in it: the codec of the platform's voice notes (whatsapp-rust src/media.rs audio_message's default mimetype)
  ogg: audio('ogg', 'audio/ogg; codecs=opus'),
  mp3: audio('mp3', 'audio/mpeg'),
  m4a: audio('m4a', 'audio/mp4'),
  aac: audio('aac', 'audio/aac'),
  wav: audio('wav', 'audio/wav')
} as const satisfies Record<string, MediaType>

/** Other spellings of some canonical extensions, accepted as they are in original filenames. */
const EXTENSION_ALIASES: Readonly<Record<string, readonly string[]>> = {
  jpg: ['jpg', 'jpeg', 'jpe', 'jfif'],
  mov: ['mov', 'qt'],
  '3gp': ['3gp', '3gpp'],
  '3g2': ['3g2', '3gpp2'],
  wmv: ['wmv', 'asf'],
  ogg: ['ogg', 'opus', 'oga']
}

/** Every spelling of a type's extension, canonical first. */
export function extensionsOf (type: MediaType): readonly string[] {
  return EXTENSION_ALIASES[type.ext] ?? [type.ext]
}

const BY_EXTENSION = new Map<string, MediaType>()
for (const type of Object.values(MEDIA_TYPES)) {
  for (const ext of extensionsOf(type)) BY_EXTENSION.set(ext, type)
}

/** The media type an extension (any spelling, any case, without the dot) names; null when not one we accept. */
export function mediaTypeOfExtension (ext: string): MediaType | null {
  return BY_EXTENSION.get(ext.toLowerCase()) ?? null
}
