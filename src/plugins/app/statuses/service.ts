import type { FastifyBaseLogger, FastifyError, FastifyInstance } from 'fastify'
import type { Static } from '@sinclair/typebox'
import type { Config } from '../../../config.js'
import type { DbHandle } from '../../../db/connection.js'
import type { StatusRow } from '../../../db/database.js'
import { findSession } from '../../../db/repositories/sessions.js'
import { deleteStatus, findStatus, insertStatus, listSent, markSent, mediaInUse, setStatusError } from '../../../db/repositories/statuses.js'
import { findUpload } from '../../../db/repositories/uploads.js'
import { listViewers } from '../../../db/repositories/viewers.js'
import { BadRequest, fromPlatform, NotConnected, SendFailed, SessionNotFound, StatusNotFound, UploadNotFound } from '../../../errors.js'
import type { PlatformEventMap, SendStatusResult, StatusContent } from '../../../platform/types.js'
import type { DeletedStatusSchema, SendStatusBody, SendStatusResultSchema, SentStatus, Viewer } from '../../../schemas/status.js'
import type { DomainEvents } from '../domain-events.js'
import { iso, toSentStatus, toViewer } from './api-shapes.js'
import { detectUrlMedia, parseHttpUrl, parseTargetNumbers } from './parse.js'

/** What the status service uses of the other decorators. */
export interface StatusDeps {
  db: DbHandle
  config: Pick<Config, 'statusTtlMs' | 'cleanupIntervalMs'>
  platform: Pick<FastifyInstance['platform'], 'snapshot' | 'newMessageId' | 'sendStatus' | 'revokeStatus' | 'on' | 'off'>
  mediaStore: Pick<FastifyInstance['mediaStore'], 'resolve' | 'remove'>
  remoteMedia: Pick<FastifyInstance['remoteMedia'], 'check' | 'fetch'>
  events: Pick<DomainEvents, 'emit'>
  log: FastifyBaseLogger
  /** optional: the viewer ingest observes receipt-to-commit latency there */
  metrics?: Pick<FastifyInstance['metrics'], 'receiptCommitLatency'>
}

export type SendStatusAnswer = Static<typeof SendStatusResultSchema>
export type DeletedStatus = Static<typeof DeletedStatusSchema>

const PLATFORM_NOTE = 'The platform offers no way to delete a published status: it stays visible to its recipients until it expires 24 hours after sending.'

function isCode (err: unknown, code: string): boolean {
  return typeof err === 'object' && err !== null && (err as FastifyError).code === code
}

/** Sending, listing, viewers and deleting of statuses, and the platform's late rejections. */
export function createStatusService (deps: StatusDeps) {
  const { config, platform, mediaStore, remoteMedia, events, log } = deps
  const db = deps.db.db

  async function requireSession (sessionId: string) {
    const session = await findSession(db, sessionId)
    if (session === undefined) throw new SessionNotFound()
    return session
  }

  async function requireStatus (sessionId: string, statusId: string | number): Promise<StatusRow> {
    await requireSession(sessionId)
    const status = await findStatus(db, sessionId, Number(statusId))
    if (status === undefined) throw new StatusNotFound()
    return status
  }

  /** Checks the body and works out what to send and what to store. */
  async function prepare (body: SendStatusBody) {
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

  async function send (sessionId: string, body: SendStatusBody): Promise<SendStatusAnswer> {
    const session = await requireSession(sessionId)
    const requested = parseTargetNumbers(body.targetNumbers)
    const prepared = await prepare(body)
    const snap = platform.snapshot(sessionId)
    const ownNumber = snap?.ownNumber ?? session.own_number
    if (snap?.connected !== true || ownNumber === null) throw new NotConnected()
    // url media: a local copy fetched through the guard; Baileys gets the file, the row keeps the URL
    const local = prepared.remote === null ? null : await remoteMedia.fetch(prepared.remote.url, prepared.remote.kind)
    const content: StatusContent = local === null || prepared.content.kind === 'text'
      ? prepared.content
      : { ...prepared.content, source: { path: local.path }, mimetype: local.type.mimeType }

    const recipients = requested.filter((n) => n !== ownNumber)
    const contactCount = Math.max(1, recipients.length)
    const messageId = platform.newMessageId(sessionId)
    const createdAt = Date.now()
    // The row exists before the first stanza goes out, so receipts that race the send find it.
    const statusId = await insertStatus(db, {
      session_id: sessionId,
      type: body.type,
      content: body.content,
      caption: prepared.caption,
      message_id: messageId,
      state: 'sending',
      created_at: createdAt,
      contact_count: contactCount,
      target_numbers: requested.join(','),
      recipients: '[]',
      media_file: prepared.mediaFile,
      background_color: prepared.backgroundColor,
      font: prepared.font,
      error: null
    })
    const id = String(statusId)

    let result: SendStatusResult
    try {
      result = await platform.sendStatus(sessionId, {
        messageId,
        content,
        recipients,
        onProgress: (sent, total) => { events.emit('status-send-progress', { sessionId, statusId: id, sent, total }) }
      })
    } catch (caught) {
      await deleteStatus(db, statusId)
      const err = fromPlatform(caught)
      if (isCode(err, 'ST_NOT_CONNECTED')) throw err
      log.warn({ err, sessionId, statusId }, 'sending status failed')
      // the platform's own SendFailed already reads "Failed to send status: …"
      throw isCode(err, 'ST_SEND_FAILED') ? err : new SendFailed(err instanceof Error ? err.message : String(err))
    } finally {
      await local?.remove()
    }
    await markSent(db, statusId, result.messageId, result.recipientJids)

    events.emit('status-sent', {
      sessionId,
      statusId: id,
      id,
      type: body.type,
      content: body.content,
      caption: prepared.caption,
      timestamp: iso(createdAt),
      platformMessageId: result.messageId,
      contactCount
    })
    return { statusId: id, message: `Status sent to ${contactCount} contact${contactCount === 1 ? '' : 's'}`, platformMessageId: result.messageId, contactCount }
  }

  async function list (sessionId: string): Promise<SentStatus[]> {
    await requireSession(sessionId)
    return (await listSent(db, sessionId, Date.now() - config.statusTtlMs)).map(toSentStatus)
  }

  async function viewers (sessionId: string, statusId: string | number): Promise<Viewer[]> {
    const status = await requireStatus(sessionId, statusId)
    return (await listViewers(db, status.id)).map(toViewer)
  }

  /** Removes a media file once no status refers to it any more. */
  async function releaseMedia (filename: string | null): Promise<boolean> {
    if (filename === null || await mediaInUse(db, filename)) return false
    try {
      return await mediaStore.remove(filename)
    } catch (err) {
      log.warn({ err, filename }, 'could not remove media file')
      return false
    }
  }

  async function remove (sessionId: string, statusId: string | number, opts: { revoke?: boolean } = {}): Promise<DeletedStatus> {
    const status = await requireStatus(sessionId, statusId)
    const id = String(status.id)
    let deletedFromPlatform = false
    let note = `${PLATFORM_NOTE} Only the local record and any media file were removed.`
    if (opts.revoke === true) {
      if (platform.snapshot(sessionId)?.connected !== true) {
        note = `Not revoked: WhatsApp is not connected. ${PLATFORM_NOTE}`
      } else {
        try {
          deletedFromPlatform = await platform.revokeStatus(sessionId, status.message_id, JSON.parse(status.recipients) as string[])
          note = deletedFromPlatform
            ? 'Revoked on the platform for its recipients; the local record and any media file were removed too.'
            : `The platform did not confirm the revoke. ${PLATFORM_NOTE}`
        } catch (err) {
          log.warn({ err, sessionId, statusId: id }, 'revoking status failed')
          note = `Revoke failed: ${err instanceof Error ? err.message : String(err)}. ${PLATFORM_NOTE}`
        }
      }
    }
    const deletedFromDatabase = await deleteStatus(db, status.id)
    const deletedImageFile = await releaseMedia(status.media_file)
    if (deletedFromDatabase) events.emit('status-deleted', { sessionId, statusId: id })
    return { statusId: id, message: 'Status deleted', deletedFromPlatform, deletedFromDatabase, deletedImageFile, note }
  }

  /** Records a rejection the platform reported after the status was written (status-error). */
  async function recordRejection ({ sessionId, messageId, error }: PlatformEventMap['status-error']): Promise<void> {
    const statusId = await setStatusError(db, sessionId, messageId, error)
    if (statusId === undefined) {
      log.debug({ sessionId, messageId, error }, 'rejection for an unknown status')
      return
    }
    log.warn({ sessionId, statusId, error }, 'the platform rejected a status')
    events.emit('statuses-updated', { sessionId, statusId: String(statusId), action: 'failed', message: `Status ${statusId} was rejected by the platform: ${error}` })
  }

  return { send, list, viewers, remove, releaseMedia, recordRejection }
}
