import type { Status } from '../../src/db/stores/statuses.js'
import { SessionNotFound, StatusNotFound, StatusSending } from '../../src/errors.js'
import type { Reaction, Reply, SentStatus, Viewer } from '../../schemas/status.js'
import { toReaction, toReply, toSentStatus, toViewer } from '../../src/api-shapes.js'
import type { DeletedStatus, StatusDeps } from './deps.js'

export type { DeletedStatus, StatusDeps }

const PLATFORM_NOTE = 'The platform offers no way to delete a published status: it stays visible to its recipients until it expires 24 hours after sending.'

/** Listing, viewers and deleting of the statuses sent (posting is plugins/send-status). */
export function createStatusService (deps: StatusDeps) {
  const { config, platform, mediaStore, events, log } = deps
  const { statuses, viewers: viewerStore } = deps.stores

  async function requireSession (sessionId: string) {
    const session = await deps.stores.sessions.find(sessionId)
    if (session === undefined) throw new SessionNotFound()
    return session
  }

  async function requireStatus (sessionId: string, statusId: string | number): Promise<Status> {
    await requireSession(sessionId)
    const status = await statuses.find(sessionId, Number(statusId))
    if (status === undefined) throw new StatusNotFound()
    return status
  }

  async function list (sessionId: string): Promise<SentStatus[]> {
    await requireSession(sessionId)
    return (await statuses.listSent(sessionId, Date.now() - config.statusTtlMs)).map(toSentStatus)
  }

  async function viewers (sessionId: string, statusId: string | number): Promise<Viewer[]> {
    const status = await requireStatus(sessionId, statusId)
    return (await viewerStore.list(status.id)).map(toViewer)
  }

  async function reactions (sessionId: string, statusId: string | number): Promise<Reaction[]> {
    const status = await requireStatus(sessionId, statusId)
    return (await viewerStore.reactions(status.id)).map(toReaction)
  }

  async function replies (sessionId: string, statusId: string | number): Promise<Reply[]> {
    const status = await requireStatus(sessionId, statusId)
    return (await viewerStore.replies(status.id)).map(toReply)
  }

  /** Removes a media file once no status refers to it any more. */
  async function releaseMedia (filename: string | null): Promise<boolean> {
    if (filename === null || await statuses.mediaInUse(filename)) return false
    try {
      return await mediaStore.remove(filename)
    } catch (err) {
      log.warn({ err, filename }, 'could not remove media file')
      return false
    }
  }

  /** `forget`: no insights summary stays (else it stays as at expiry, unless INSIGHTS_RETENTION_DAYS is 0). */
  async function remove (sessionId: string, statusId: string | number, opts: { revoke?: boolean, forget?: boolean } = {}): Promise<DeletedStatus> {
    const status = await requireStatus(sessionId, statusId)
    // its chunks are still being committed (or a restart left it to be resumed, within SEND_RECONNECT_WAIT_MS)
    if (status.state === 'sending') throw new StatusSending()
    const id = String(status.id)
    let deletedFromPlatform = false
    let note = `${PLATFORM_NOTE} Only the local record and any media file were removed.`
    if (opts.revoke === true) {
      if (platform.snapshot(sessionId)?.connected !== true) {
        note = `Not revoked: WhatsApp is not connected. ${PLATFORM_NOTE}`
      } else {
        try {
          // exactly the JIDs that have it: all of a sent status, the committed ones of a partial one
          // true only when the platform acked every chunk of the revoke without an error; a refusal throws with its code
          deletedFromPlatform = await platform.revokeStatus(sessionId, status.messageId, await statuses.recipients(status.id))
          note = deletedFromPlatform
            ? 'Revoked on the platform for its recipients; the local record and any media file were removed too.'
            : `The platform did not confirm the revoke. ${PLATFORM_NOTE}`
        } catch (err) {
          log.warn({ err, sessionId, statusId: id }, 'revoking status failed')
          note = `Revoke failed: ${err instanceof Error ? err.message : String(err)}. ${PLATFORM_NOTE}`
        }
      }
    }
    const deletedFromDatabase = await events.within(async (tx, emit) => {
      // the summary and the deletion commit together, as at expiry
      if (opts.forget === true) await tx.insights.forget(sessionId, status.id)
      else if (config.insightsRetentionMs > 0) await tx.insights.keep(sessionId, status.id)
      if (!await tx.statuses.remove(status.id)) return false
      emit('status-deleted', { sessionId, statusId: id })
      // the seed contract: statuses-updated whenever the sent-statuses list changes (status-deleted is the finer event)
      emit('statuses-updated', { sessionId, statusId: id, action: 'deleted', message: `Status ${id} deleted` })
      return true
    })
    const deletedImageFile = await releaseMedia(status.mediaFile)
    return { statusId: id, message: 'Status deleted', deletedFromPlatform, deletedFromDatabase, deletedImageFile, note }
  }

  return { list, viewers, reactions, replies, remove, releaseMedia }
}
