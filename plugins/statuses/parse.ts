import { BadRequest } from '../../src/errors.js'
import { mediaTypeOfExtension, type MediaKind } from '../../src/media/types.js'
import { PHONE_PATTERN, PHONE_RULE } from '../../schemas/common.js'

const PHONE = new RegExp(PHONE_PATTERN)

/** Extensions a status URL may end in to go out as media; any other URL goes out as a text status. */
const URL_MEDIA_EXTENSIONS = new Set(['jpg', 'jpeg', 'png', 'gif', 'webp', 'bmp', 'mp4', 'avi', 'mov', 'wmv', 'flv', 'mkv', 'webm'])

/** Comma-separated numbers → trimmed, validated, de-duplicated list in the order given. */
export function parseTargetNumbers (raw: string | undefined): string[] {
  const out = new Set<string>()
  for (const part of (raw ?? '').split(',')) {
    const n = part.trim()
    if (n === '') continue
    if (!PHONE.test(n)) throw new BadRequest(`targetNumbers entry "${n.length > 40 ? n.slice(0, 40) + '…' : n}" must be ${PHONE_RULE}`)
    out.add(n)
  }
  return [...out]
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
