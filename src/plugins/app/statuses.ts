import fp from 'fastify-plugin'
import type { FastifyBaseLogger, FastifyError, FastifyInstance } from 'fastify'
import type { Static } from '@sinclair/typebox'
import type { Config } from '../../config.js'
import type { DbHandle } from '../../db/connection.js'
import type { StatusRow } from '../../db/database.js'
import {
  deleteStatus, deleteStatusesBefore, findSession, findStatus, findUpload, insertStatus, listSent, markSent,
  mediaInUse, setStatusError, unusedUploadsBefore
} from '../../db/repositories/statuses.js'
import { listViewers, viewerWriter, type ViewToRecord } from '../../db/repositories/viewers.js'
import { BadRequest, NotConnected, SendFailed, SessionNotFound, StatusNotFound, UploadNotFound } from '../../errors.js'
import type { PlatformEventMap, ReceiptEvent, SendStatusResult, StatusContent } from '../../platform/types.js'
import type { DeletedStatusSchema, SendStatusBody, SendStatusResultSchema, SentStatus, Viewer } from '../../schemas/status.js'

/** What the status service uses of the other decorators. */
export interface StatusDeps {
  db: DbHandle
  config: Pick<Config, 'statusTtlMs' | 'cleanupIntervalMs'>
  platform: Pick<FastifyInstance['platform'], 'snapshot' | 'newMessageId' | 'sendStatus' | 'revokeStatus' | 'on' | 'off'>
  mediaStore: Pick<FastifyInstance['mediaStore'], 'resolve' | 'remove'>
  remoteMedia: Pick<FastifyInstance['remoteMedia'], 'check' | 'fetch'>
  broadcaster: FastifyInstance['broadcaster']
  log: FastifyBaseLogger
}

interface Cooling { timer: NodeJS.Timeout | null, dirty: boolean }

export type SendStatusAnswer = Static<typeof SendStatusResultSchema>
export type DeletedStatus = Static<typeof DeletedStatusSchema>

/** Receipts are written at most this long after they arrive ... */
export const INGEST_WINDOW_MS = 20
/** ... or as soon as this many are queued. */
export const INGEST_BATCH_MAX = 500
/** At most one status-viewers-update per status per this window (the last state always goes out). */
export const VIEWERS_UPDATE_MS = 200

const PHONE = /^[0-9]{10,15}$/
const IMAGE_EXT: Record<string, string> = { jpg: 'image/jpeg', jpeg: 'image/jpeg', png: 'image/png', gif: 'image/gif', webp: 'image/webp', bmp: 'image/bmp' }
const VIDEO_EXT: Record<string, string> = {
  mp4: 'video/mp4', avi: 'video/x-msvideo', mov: 'video/quicktime', wmv: 'video/x-ms-wmv',
  flv: 'video/x-flv', mkv: 'video/x-matroska', webm: 'video/webm'
}
const PLATFORM_NOTE = 'The platform offers no way to delete a published status: it stays visible to its recipients until it expires 24 hours after sending.'

/** Comma-separated numbers → trimmed, validated, de-duplicated list in the order given. */
export function parseTargetNumbers (raw: string | undefined): string[] {
  const out = new Set<string>()
  for (const part of (raw ?? '').split(',')) {
    const n = part.trim()
    if (n === '') continue
    if (!PHONE.test(n)) throw new BadRequest(`targetNumbers entry "${n.length > 40 ? n.slice(0, 40) + '…' : n}" must be 10 to 15 digits including country code, no plus sign`)
    out.add(n)
  }
  return [...out]
}

/** Media kind and MIME type of a URL from its path's extension (query and fragment ignored); null when not recognised. */
export function detectUrlMedia (url: URL): { kind: 'image' | 'video', mimetype: string } | null {
  const m = /\.([A-Za-z0-9]+)$/.exec(url.pathname)
  if (m === null) return null
  const ext = m[1].toLowerCase()
  if (ext in IMAGE_EXT) return { kind: 'image', mimetype: IMAGE_EXT[ext] }
  if (ext in VIDEO_EXT) return { kind: 'video', mimetype: VIDEO_EXT[ext] }
  return null
}

export function parseHttpUrl (content: string): URL {
  let url: URL
  try { url = new URL(content.trim()) } catch { throw new BadRequest('content must be an http(s) URL for type url') }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.hostname === '') throw new BadRequest('content must be an http(s) URL for type url')
  return url
}

function iso (ms: number): string {
  return new Date(ms).toISOString()
}

function toViewer (r: { jid: string, number: string, viewed_at: number, is_real: number }): Viewer {
  return { jid: r.jid, number: r.number, viewedAt: iso(r.viewed_at), isReal: r.is_real === 1 }
}

function isCode (err: unknown, code: string): boolean {
  return typeof err === 'object' && err !== null && (err as FastifyError).code === code
}

export function createStatusService (deps: StatusDeps) {
  const { db: handle, config, platform, mediaStore, remoteMedia, broadcaster, log } = deps
  const db = handle.db
  const writer = viewerWriter(handle.sqlite)
  let closed = false

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
        onProgress: (sent, total) => { broadcaster.emit('status-send-progress', { sessionId, statusId: id, sent, total }) }
      })
    } catch (err) {
      await deleteStatus(db, statusId)
      if (isCode(err, 'ST_NOT_CONNECTED')) throw err
      log.warn({ err, sessionId, statusId }, 'sending status failed')
      // the platform's own SendFailed already reads "Failed to send status: …"
      throw isCode(err, 'ST_SEND_FAILED') ? err : new SendFailed(err instanceof Error ? err.message : String(err))
    } finally {
      await local?.remove()
    }
    await markSent(db, statusId, result.messageId, result.recipientJids)

    broadcaster.emit('status-sent', {
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
    const rows = await listSent(db, sessionId, Date.now() - config.statusTtlMs)
    return rows.map((r) => ({
      id: String(r.id),
      type: r.type,
      content: r.content,
      caption: r.caption,
      timestamp: iso(r.created_at),
      platformMessageId: r.message_id,
      contactCount: r.contact_count,
      targetNumbers: r.target_numbers,
      viewerCount: r.viewer_count,
      error: r.error
    }))
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
    if (deletedFromDatabase) broadcaster.emit('status-deleted', { sessionId, statusId: id })
    return { statusId: id, message: 'Status deleted', deletedFromPlatform, deletedFromDatabase, deletedImageFile, note }
  }

  // ---- cleanup ----

  let cleaning: Promise<{ statuses: number, uploads: number }> | null = null

  async function runCleanup (): Promise<{ statuses: number, uploads: number }> {
    const before = Date.now() - config.statusTtlMs
    const expired = await deleteStatusesBefore(db, before)
    let uploads = 0
    for (const file of new Set(expired.map((s) => s.media_file))) {
      if (await releaseMedia(file)) uploads++
    }
    for (const file of await unusedUploadsBefore(db, before)) {
      if (await releaseMedia(file)) uploads++
    }
    const perSession = new Map<string, number>()
    for (const s of expired) perSession.set(s.session_id, (perSession.get(s.session_id) ?? 0) + 1)
    for (const [sessionId, n] of perSession) {
      broadcaster.emit('statuses-updated', { sessionId, action: 'cleanup', message: `${n} expired status${n === 1 ? '' : 'es'} removed` })
    }
    if (expired.length > 0 || uploads > 0) log.info({ statuses: expired.length, uploads }, 'expired statuses and uploads removed')
    return { statuses: expired.length, uploads }
  }

  /** Removes expired statuses (with viewers and media) and old unused uploads; concurrent calls share one run. */
  async function cleanup (): Promise<{ statuses: number, uploads: number }> {
    cleaning ??= runCleanup().finally(() => { cleaning = null })
    return await cleaning
  }

  // ---- viewer ingest ----

  let queue: ViewToRecord[] = []
  let flushTimer: NodeJS.Timeout | null = null
  /** per status: the cool-down after an update, and whether another change came in during it */
  const cooling = new Map<number, Cooling>()
  const stats = { received: 0, recorded: 0, flushes: 0 }

  function ownNumberOf (sessionId: string): string | null {
    return platform.snapshot(sessionId)?.ownNumber ?? writer.storedOwnNumber(sessionId)
  }

  function ingest (sessionId: string, receipts: ReceiptEvent[]): void {
    let own: string | null | undefined
    for (const r of receipts) {
      if (r.type !== 'read' && r.type !== 'played') continue
      if (r.viewerNumber === null) {
        log.debug({ sessionId, viewerJid: r.viewerJid, messageId: r.messageId }, 'view from an unmapped LID skipped')
        continue
      }
      if (own === undefined) own = ownNumberOf(sessionId)
      queue.push({ sessionId, messageId: r.messageId, number: r.viewerNumber, jid: `${r.viewerNumber}@s.whatsapp.net`, viewedAt: r.at, isReal: r.viewerNumber !== own })
      stats.received++
    }
    if (queue.length >= INGEST_BATCH_MAX) flush()
    else if (queue.length > 0) scheduleFlush(INGEST_WINDOW_MS)
  }

  function scheduleFlush (ms: number): void {
    flushTimer ??= setTimeout(flush, ms)
  }

  /** Writes every queued view in one transaction; returns false when they had to stay queued. */
  function flush (): boolean {
    if (flushTimer !== null) { clearTimeout(flushTimer); flushTimer = null }
    if (queue.length === 0) return true
    // better-sqlite3 would nest our transaction as a savepoint inside one another caller holds open across
    // an await, and lose the views if that one rolls back: wait for it to finish instead.
    if (handle.sqlite.inTransaction) { if (!closed) scheduleFlush(INGEST_WINDOW_MS); return false }
    const batch = queue
    queue = []
    let result
    try {
      result = writer.record(batch)
    } catch (err) {
      queue = batch.concat(queue)
      log.error({ err, queued: queue.length }, 'recording status views failed; will retry')
      if (!closed) scheduleFlush(1000)
      return false
    }
    stats.flushes++
    stats.recorded += batch.length
    if (result.unmatched > 0) log.debug({ unmatched: result.unmatched }, 'views for unknown statuses skipped')
    for (const [statusId, sessionId] of result.changed) viewersChanged(statusId, sessionId)
    return true
  }

  /**
   * Leading edge at once, then at most one more per window carrying the state at its end. The window
   * starts when an update has gone out, so slow reads (big lists) cannot bunch two updates together.
   */
  function viewersChanged (statusId: number, sessionId: string): void {
    if (closed) return
    const state = cooling.get(statusId)
    if (state !== undefined) { state.dirty = true; return }
    const entry: Cooling = { timer: null, dirty: false }
    cooling.set(statusId, entry)
    void emitThenCool(statusId, sessionId, entry)
  }

  async function emitThenCool (statusId: number, sessionId: string, entry: Cooling): Promise<void> {
    await emitViewers(statusId, sessionId)
    if (closed) return
    entry.timer = setTimeout(() => {
      entry.timer = null
      if (!entry.dirty || closed) { cooling.delete(statusId); return }
      entry.dirty = false
      void emitThenCool(statusId, sessionId, entry)
    }, VIEWERS_UPDATE_MS)
  }

  async function emitViewers (statusId: number, sessionId: string): Promise<void> {
    try {
      const rows = await listViewers(db, statusId)
      // an empty list means the status was deleted meanwhile (its viewers went with it)
      if (rows.length === 0 || closed) return
      broadcaster.emit('status-viewers-update', { sessionId, statusId: String(statusId), viewers: rows.map(toViewer) })
    } catch (err) {
      log.warn({ err, statusId }, 'could not read viewers for status-viewers-update')
    }
  }

  async function statusRejected ({ sessionId, messageId, error }: PlatformEventMap['status-error']): Promise<void> {
    const statusId = await setStatusError(db, sessionId, messageId, error)
    if (statusId === undefined) {
      log.debug({ sessionId, messageId, error }, 'rejection for an unknown status')
      return
    }
    log.warn({ sessionId, statusId, error }, 'the platform rejected a status')
    broadcaster.emit('statuses-updated', { sessionId, statusId: String(statusId), action: 'failed', message: `Status ${statusId} was rejected by the platform: ${error}` })
  }

  const onReceipts = ({ sessionId, receipts }: PlatformEventMap['status-receipts']): void => {
    if (closed) { log.warn({ sessionId, count: receipts.length }, 'receipts after close dropped'); return }
    ingest(sessionId, receipts)
  }
  const onStatusError = (payload: PlatformEventMap['status-error']): void => {
    statusRejected(payload).catch((err: unknown) => { log.error({ err }, 'recording a status rejection failed') })
  }

  // ---- lifecycle ----

  let cleanupTimer: NodeJS.Timeout | null = null

  function start (): void {
    platform.on('status-receipts', onReceipts)
    platform.on('status-error', onStatusError)
  }

  function startCleanupTimer (): void {
    cleanupTimer = setInterval(() => {
      cleanup().catch((err: unknown) => { log.error({ err }, 'status cleanup failed') })
    }, config.cleanupIntervalMs)
    cleanupTimer.unref()
  }

  /** Writes what is queued and stops timers; events arriving later are dropped with a warning. */
  function stop (): void {
    if (cleanupTimer !== null) { clearInterval(cleanupTimer); cleanupTimer = null }
    const left = queue.length
    if (!flush() && left > 0) log.error({ lost: queue.length }, 'status views could not be written before close')
    closed = true
    if (flushTimer !== null) { clearTimeout(flushTimer); flushTimer = null }
    for (const { timer } of cooling.values()) if (timer !== null) clearTimeout(timer)
    cooling.clear()
    platform.off('status-receipts', onReceipts)
    platform.off('status-error', onStatusError)
  }

  return {
    send,
    list,
    viewers,
    remove,
    cleanup,
    /** receipt ingest entry point (the platform's status-receipts events come here) */
    ingest,
    /** writes queued views now; for tests and shutdown */
    flush,
    /** counters of the viewer ingest */
    stats: (): Readonly<typeof stats> & { queued: number } => ({ ...stats, queued: queue.length }),
    start,
    startCleanupTimer,
    stop
  }
}

export type StatusService = ReturnType<typeof createStatusService>

declare module 'fastify' {
  interface FastifyInstance {
    statuses: StatusService
  }
}

export default fp(async (app) => {
  const service = createStatusService({
    db: app.db,
    config: app.config,
    platform: app.platform,
    mediaStore: app.mediaStore,
    remoteMedia: app.remoteMedia,
    broadcaster: app.broadcaster,
    log: app.log.child({ plugin: 'statuses' })
  })
  app.decorate('statuses', service)
  service.start()
  app.addHook('onReady', async () => {
    try {
      await service.cleanup()
    } catch (err) {
      app.log.error({ err }, 'status cleanup at start failed')
    }
    service.startCleanupTimer()
  })
  // preClose writes queued views while the platform still runs; onClose (before the database closes,
  // hooks run in reverse order) catches what arrived since.
  app.addHook('preClose', async () => { service.flush() })
  app.addHook('onClose', async () => { service.stop() })
}, { name: 'statuses', dependencies: ['db', 'broadcaster', 'platform', 'media-store', 'remote-media'] })
