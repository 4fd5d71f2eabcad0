import { findUpload } from '../../src/db/repositories/uploads.js'
import { BadRequest, UploadNotFound } from '../../src/errors.js'
import type { StatusContent } from '../../src/platform/types.js'
import type { SendStatusBody } from '../../schemas/status.js'
import { detectUrlMedia, parseHttpUrl } from './parse.js'
import type { StatusDeps } from './service.js'

/** Checks a send-status body and works out what to send and what to store. */
export async function prepareContent (deps: Pick<StatusDeps, 'db' | 'mediaStore' | 'remoteMedia'>, body: SendStatusBody) {
  const { mediaStore, remoteMedia } = deps
  const db = deps.db.db
  const caption = body.caption ?? ''
  switch (body.type) {
    case 'text': {
      const content: StatusContent = { kind: 'text', text: body.content }
      if (body.backgroundColor !== undefined) content.backgroundColor = body.backgroundColor
      if (body.font !== undefined) content.font = body.font
      return { content, caption: '', mediaFile: null, backgroundColor: body.backgroundColor ?? null, font: body.font ?? null, remote: null }
    }
    case 'image':
    case 'video': {
      const name = body.content
      if (!await mediaStore.exists(name)) throw new UploadNotFound()
      const upload = await findUpload(db, name)
      if (upload !== undefined && upload.kind !== body.type) throw new BadRequest(`content is an uploaded ${upload.kind}, not an ${body.type}`)
      // the source is the store's local copy, opened by the send once the session is known to be connected
      const content: StatusContent = { kind: body.type, source: { path: name }, caption }
      if (upload !== undefined) content.mimetype = upload.mime_type
      return { content, caption, mediaFile: name, backgroundColor: null, font: null, remote: null }
    }
    case 'url': {
      const url = parseHttpUrl(body.content)
      const media = detectUrlMedia(url)
      // media is fetched by the server through the guard after the connection check (send); text is not fetched
      if (media !== null) remoteMedia.check(url)
      const content: StatusContent = media === null
        ? { kind: 'text', text: caption === '' ? body.content : `${body.content}\n${caption}` }
        : { kind: media.kind, source: { url: url.href }, mimetype: media.mimetype, caption }
      return { content, caption, mediaFile: null, backgroundColor: null, font: null, remote: media === null ? null : { url, kind: media.kind } }
    }
  }
}

/**
 * The local file Baileys reads: url media fetched through the guard (the row keeps the URL; a resumed send
 * does not need it again: the built message, media uploaded, is stored), or an upload as the store gives it
 * (local: its file; S3: a copy of its object, read here, on the session's owner). `release` removes copies.
 */
export async function openMedia (deps: Pick<StatusDeps, 'mediaStore' | 'remoteMedia'>, prepared: Awaited<ReturnType<typeof prepareContent>>): Promise<{ content: StatusContent, release: () => Promise<void> }> {
  const { content } = prepared
  if (prepared.remote !== null && content.kind !== 'text') {
    const local = await deps.remoteMedia.fetch(prepared.remote.url, prepared.remote.kind)
    return { content: { ...content, source: { path: local.path }, mimetype: local.type.mimeType }, release: local.remove }
  }
  if (prepared.mediaFile !== null && content.kind !== 'text') {
    const stored = await deps.mediaStore.open(prepared.mediaFile)
    if (stored === null) throw new UploadNotFound()
    return { content: { ...content, source: { path: stored.path } }, release: stored.release }
  }
  return { content, release: async () => {} }
}
