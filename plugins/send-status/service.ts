import { SessionNotFound } from '../../src/errors.js'
import type { PlatformEventMap } from '../../src/platform/types.js'
import type { SendStatusBody } from '../../schemas/status.js'
import { createSending } from './sending.js'
import { chooseRecipients, type ResolvedRecipients } from './recipients.js'
import type { SendStatusAccepted, SendStatusAnswer, SendStatusDeps } from './deps.js'

/** Posting a status (see sending.ts for a send's recorded life) and the platform's late rejections. */
export function createSendStatusService (deps: SendStatusDeps) {
  const { config, platform, events, log } = deps
  const sending = createSending(deps)

  /**
   * Whom the body's targetNumbers or audience come to now: for pacing's look-ahead of a scheduled run, which
   * then hands them to `submit` (the audience resolved once per run).
   */
  async function recipientsOf (sessionId: string, body: SendStatusBody): Promise<ResolvedRecipients> {
    const session = await requireSession(sessionId)
    const own = { number: platform.snapshot(sessionId)?.ownNumber ?? session.ownNumber, lid: session.ownLid }
    return await chooseRecipients(deps.audiences, body).resolve(sessionId, own)
  }

  /** Sends a status and waits for the end of the send. */
  async function send (sessionId: string, body: SendStatusBody): Promise<SendStatusAnswer> {
    return await (await sending.start(sessionId, body)).delivery
  }

  /**
   * What the send-status route does: waits for the end (200) unless the request said `wait: false` or the
   * operator set SEND_WAIT_MAX_RECIPIENTS (default: unset) and the list is longer; then answers `sending` (202) once the status is recorded,
   * and the end reaches clients as events only (status-sent, or statuses-updated partial / send-failed).
   */
  async function submit (sessionId: string, body: SendStatusBody, resolved?: ResolvedRecipients): Promise<SendStatusAnswer | SendStatusAccepted> {
    const started = await sending.start(sessionId, body, resolved)
    const tooLong = config.sendWaitMaxRecipients !== null && started.contactCount > config.sendWaitMaxRecipients
    if (body.wait !== false && !tooLong) return await started.delivery
    // sending.ts already logged the failure and emitted its event; a crash meanwhile is resumed at start
    started.delivery.catch((err: unknown) => { log.debug({ err, sessionId, statusId: started.statusId }, 'background send ended without recipients') })
    const plural = started.contactCount === 1 ? '' : 's'
    return {
      statusId: started.statusId,
      message: `Sending status to ${started.contactCount} contact${plural}; follow status-send-progress and status-sent`,
      platformMessageId: started.messageId,
      contactCount: started.contactCount,
      state: 'sending'
    }
  }

  async function requireSession (sessionId: string) {
    const session = await deps.stores.sessions.find(sessionId)
    if (session === undefined) throw new SessionNotFound()
    return session
  }

  /**
   * Records a rejection the platform reported after the status was written (status-error). One its own
   * send met (`inSend`) is told by that send's outcome instead (sent after push-back, partial, or failed).
   */
  async function recordRejection ({ sessionId, messageId, error, inSend }: PlatformEventMap['status-error']): Promise<void> {
    if (inSend === true) return
    const statusId = await events.within(async (tx, emit) => {
      const found = await tx.statuses.setError(sessionId, messageId, error)
      if (found !== undefined) emit('statuses-updated', { sessionId, statusId: String(found), action: 'failed', message: `Status ${found} was rejected by the platform: ${error}` })
      return found
    })
    if (statusId === undefined) {
      log.debug({ sessionId, messageId, error }, 'rejection for an unknown status')
      return
    }
    log.warn({ sessionId, statusId, error }, 'the platform rejected a status')
  }

  return { send, submit, recipientsOf, recover: sending.recover, drain: sending.drain, recordRejection }
}
