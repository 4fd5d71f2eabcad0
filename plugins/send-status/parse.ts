import { BadRequest } from '../../src/errors.js'
import { mediaTypeOfExtension, type MediaKind } from '../../src/media/types.js'
import { parseNumberList } from '../audiences/numbers.js'

/** Extensions a status URL may end in to go out as media; any other URL goes out as a text status. */
const URL_MEDIA_EXTENSIONS = new Set(['jpg', 'jpeg', 'png', 'gif', 'webp', 'bmp', 'mp4', 'avi', 'mov', 'wmv', 'flv', 'mkv', 'webm',
  'mp3', 'm4a', 'ogg', 'opus', 'wav', 'aac'])

/**
 * Comma-separated numbers → trimmed, validated, de-duplicated list in the order given: the audiences' list rule
 * on the comma-split parts (a 400 naming `field[i]`, i counting the parts, for each bad one).
 */
export function parseTargetNumbers (raw: string | undefined, field = 'body.targetNumbers'): string[] {
  return parseNumberList((raw ?? '').split(','), field)
}

/** Media kind and MIME type of a URL from its path's extension (query and fragment ignored); null when not recognised. */
export function detectUrlMedia (url: URL): { kind: MediaKind, mimetype: string } | null {
  const m = /\.([A-Za-z0-9]+)$/.exec(url.pathname)
  if (m === null || !URL_MEDIA_EXTENSIONS.has(m[1].toLowerCase())) return null
  const type = mediaTypeOfExtension(m[1])
  return type === null ? null : { kind: type.kind, mimetype: type.mimeType }
}

export function parseHttpUrl (content: string): URL {
  let url: URL
  try { url = new URL(content.trim()) } catch { throw new BadRequest('content must be an http(s) URL for type url') }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.hostname === '') throw new BadRequest('content must be an http(s) URL for type url')
  return url
}
