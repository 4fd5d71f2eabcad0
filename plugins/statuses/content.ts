import { findUpload } from '../../src/db/repositories/uploads.js'
import { BadRequest, UploadNotFound, UrlRefused } from '../../src/errors.js'
import { audioDetails, audioFileDetails } from '../../src/media/audio.js'
import type { FetchedMedia } from '../../src/media/remote-fetch.js'
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
      const path = mediaStore.resolve(name)
      if (path === null) throw new UploadNotFound()
      const upload = await findUpload(db, name)
      if (upload !== undefined && upload.kind !== body.type) throw new BadRequest(`content is an uploaded ${upload.kind}, not an ${body.type}`)
      const content: StatusContent = { kind: body.type, source: { path }, caption }
      if (upload !== undefined) content.mimetype = upload.mime_type
      return { content, caption, mediaFile: name, backgroundColor: null, font: null, remote: null }
    }
    case 'audio': {
      const name = body.content
      const path = mediaStore.resolve(name)
      if (path === null) throw new UploadNotFound()
      const upload = await findUpload(db, name)
      if (upload !== undefined && upload.kind !== 'audio') throw new BadRequest(`content is an uploaded ${upload.kind}, not audio`)
      const details = await audioFileDetails(path)
      if (details === null) throw new BadRequest('content is not an uploaded audio file')
      // the platform's audio message has no caption: none is sent or stored
      const content: StatusContent = { kind: 'audio', source: { path }, ...details }
      return { content, caption: '', mediaFile: name, backgroundColor: null, font: null, remote: null }
    }
    case 'url': {
      const url = parseHttpUrl(body.content)
      const media = detectUrlMedia(url)
      // media is fetched by the server through the guard after the connection check (send); text is not fetched
      if (media !== null) remoteMedia.check(url)
      const content: StatusContent = media === null
        ? { kind: 'text', text: caption === '' ? body.content : `${body.content}\n${caption}` }
        : media.kind === 'audio'
          // ptt and seconds once the file is here (fromLocalCopy); no caption on audio
          ? { kind: 'audio', source: { url: url.href }, mimetype: media.mimetype, ptt: false }
          : { kind: media.kind, source: { url: url.href }, mimetype: media.mimetype, caption }
      const stored = media?.kind === 'audio' ? '' : caption
      return { content, caption: stored, mediaFile: null, backgroundColor: null, font: null, remote: media === null ? null : { url, kind: media.kind } }
    }
  }
}

/**
 * A url status's content once its media was fetched (`local`): sent from the local copy with the sniffed type;
 * audio also gets its voice-note flag and duration from the file (refused, the copy removed, when it has none).
 */
export async function fromLocalCopy (content: StatusContent, local: FetchedMedia): Promise<StatusContent> {
  if (content.kind === 'text') return content
  const source = { path: local.path }
  if (content.kind !== 'audio') return { ...content, source, mimetype: local.type.mimeType }
  const details = await audioDetails(local.path, local.type)
  if (details === null) {
    await local.remove()
    throw new UrlRefused('the content at the URL is not audio with a readable duration')
  }
  return { ...content, source, ...details }
}
