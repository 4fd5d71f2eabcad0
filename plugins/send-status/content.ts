import { BadRequest, UploadNotFound, UrlRefused } from '../../src/errors.js'
import { audioDetails, audioFileDetails, type AudioDetails } from '../../src/media/audio.js'
import type { FetchedMedia } from '../../src/media/remote-fetch.js'
import type { StatusContent } from '../../src/platform/types.js'
import type { SendStatusBody } from '../../schemas/status.js'
import { detectUrlMedia, parseHttpUrl } from './parse.js'
import type { SendStatusDeps } from './deps.js'

/** Checks a send-status body and works out what to send and what to store. */
export async function prepareContent (deps: Pick<SendStatusDeps, 'stores' | 'mediaStore' | 'remoteMedia'>, body: SendStatusBody) {
  const { mediaStore, remoteMedia } = deps
  const uploads = deps.stores.uploads
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
      const upload = await uploads.find(name)
      if (upload !== undefined && upload.kind !== body.type) throw new BadRequest(`content is an uploaded ${upload.kind}, not an ${body.type}`)
      // the source is the store's local copy, opened by the send once the session is known to be connected
      const content: StatusContent = { kind: body.type, source: { path: name }, caption }
      if (upload !== undefined) content.mimetype = upload.mimeType
      return { content, caption, mediaFile: name, backgroundColor: null, font: null, remote: null }
    }
    case 'audio': {
      const name = body.content
      if (!await mediaStore.exists(name)) throw new UploadNotFound()
      const upload = await uploads.find(name)
      if (upload !== undefined && upload.kind !== 'audio') throw new BadRequest(`content is an uploaded ${upload.kind}, not audio`)
      // ptt and seconds are read from the store's local copy by the send (openMedia); the platform's audio
      // message has no caption: none is sent or stored
      const content: StatusContent = { kind: 'audio', source: { path: name }, mimetype: upload?.mimeType ?? 'audio/ogg', ptt: false }
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
 * The local file Baileys reads: url media fetched through the guard (the row keeps the URL; a resumed send
 * does not need it again: the built message, media uploaded, is stored), or an upload as the store gives it
 * (local: its file; S3: a copy of its object, read here, on the session's owner). Audio also gets its
 * voice-note flag and duration from that file. `release` removes copies; a refusal here removes them too.
 */
export async function openMedia (deps: Pick<SendStatusDeps, 'mediaStore' | 'remoteMedia'>, prepared: Awaited<ReturnType<typeof prepareContent>>): Promise<{ content: StatusContent, release: () => Promise<void> }> {
  const { content } = prepared
  if (prepared.remote !== null && content.kind !== 'text') {
    const local = await deps.remoteMedia.fetch(prepared.remote.url, prepared.remote.kind)
    return { content: await fromLocalCopy(content, local), release: local.remove }
  }
  if (prepared.mediaFile !== null && content.kind !== 'text') {
    const stored = await deps.mediaStore.open(prepared.mediaFile)
    if (stored === null) throw new UploadNotFound()
    const source = { path: stored.path }
    if (content.kind !== 'audio') return { content: { ...content, source }, release: stored.release }
    let details: AudioDetails | null
    try {
      details = await audioFileDetails(stored.path)
    } catch (err) {
      await stored.release()
      throw err
    }
    if (details === null) {
      await stored.release()
      throw new BadRequest('content is not an uploaded audio file')
    }
    return { content: { ...content, source, ...details }, release: stored.release }
  }
  return { content, release: async () => {} }
}

/**
 * A url status's content once its media was fetched (`local`): sent from the local copy with the sniffed type;
 * audio also gets its voice-note flag and duration from the file (refused, the copy removed, when it has none).
 */
async function fromLocalCopy (content: Exclude<StatusContent, { kind: 'text' }>, local: FetchedMedia): Promise<StatusContent> {
  const source = { path: local.path }
  if (content.kind !== 'audio') return { ...content, source, mimetype: local.type.mimeType }
  const details = await audioDetails(local.path, local.type)
  if (details === null) {
    await local.remove()
    throw new UrlRefused('the content at the URL is not audio with a readable duration')
  }
  return { ...content, source, ...details }
}
