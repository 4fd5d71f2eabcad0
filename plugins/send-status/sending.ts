import type { InterruptedStatus } from '../../src/db/stores/statuses.js'
import { fromPlatform, NotConnected, SendFailed, SessionNotFound } from '../../src/errors.js'
import { pnJid } from '../../src/jid.js'
import type { SendStatusResult } from '../../src/platform/types.js'
import type { SendStatusBody } from '../../schemas/status.js'
import { iso } from '../../src/api-shapes.js'
import { openMedia, prepareContent } from './content.js'
import { whenOpen } from './when-open.js'
import { mentionsOf, storedMentions, withMentions } from './mentions.js'
import { chooseRecipients, storedRecipients, type ResolvedRecipients } from './recipients.js'
import type { SendStatusAnswer, SendStatusDeps } from './deps.js'
import { abandon, countContacts, isCode, progressReport, quiet, sentMessage, StatusGone, stoppedMessage, type Delivery } from './delivery.js'

// A send's recorded life (issue 11). The row is inserted `sending` before anything goes out; the built
// message is stored before the first chunk, and each chunk the platform acknowledged is committed (its JIDs,
// the new sent_count, its status-send-progress) before the next one goes out. A dropped link is waited out
// (SEND_RECONNECT_WAIT_MS) and the send continues under the same message id. A send that stops for good
// ends `partial` with exactly the committed recipients, or is removed when nobody has it. At start, rows a
// crash left `sending` are resumed once their session is open (same message and id, remaining recipients only).

export function createSending (deps: SendStatusDeps) {
  const { config, platform, events, eventLog, log } = deps
  // a send's progress is committed between two chunks (each step resolves once committed)
  const progress = deps.stores.statuses
  const { statuses } = deps.stores
  /** sends and resumes under way; the plugin waits for them before the database closes */
  const running = new Set<Promise<unknown>>()
  /** resumes waiting for their session; told when the service stops */
  const waiting = new Set<() => void>()
  /** statuses this process is sending right now (a resume must not start a second send of one) */
  const active = new Set<number>()
  let closing = false

  function track<T> (promise: Promise<T>): Promise<T> {
    running.add(promise)
    quiet(promise).finally(() => { running.delete(promise) }).catch(() => {})
    return promise
  }

  /**
   * Checks the request, records the status (`sending`) and starts the send. `delivery` settles when it ends
   * (the answer, or the error answer; already observed, so it may run in the background unawaited).
   */
  async function start (sessionId: string, body: SendStatusBody, resolved?: ResolvedRecipients) {
    const session = await deps.stores.sessions.find(sessionId)
    if (session === undefined) throw new SessionNotFound()
    const chosen = chooseRecipients(deps.audiences, body)
    const prepared = await prepareContent(deps, body)
    const snap = platform.snapshot(sessionId)
    const ownNumber = snap?.ownNumber ?? session.ownNumber
    const chosenNow = resolved ?? await chosen.resolve(sessionId, { number: ownNumber, lid: session.ownLid })
    // a linked session between two sockets (the server ended its stream a moment ago) is not refused: the
    // send waits for the reconnect, as one under way does when its link drops (SEND_RECONNECT_WAIT_MS)
    if (!platform.reachable(sessionId) || ownNumber === null) throw new NotConnected()
    const mentions = mentionsOf(body, ownNumber)
    const recipients = withMentions(chosenNow.recipients, mentions)
    const audience = chosenNow.audience
    const media = await openMedia(deps, prepared)
    const contactCount = Math.max(1, recipients.length)
    let statusId: number
    let messageId: string
    let createdAt: number
    try {
      await deps.admit?.(sessionId, contactCount)
      messageId = platform.newMessageId(sessionId)
      createdAt = Date.now()
      // The row exists before the first stanza goes out, so receipts that race the send find it.
      statusId = await statuses.insert({
        sessionId: sessionId,
        type: body.type,
        content: body.content,
        caption: prepared.caption,
        messageId: messageId,
        state: 'sending',
        createdAt: createdAt,
        contactCount: contactCount,
        targetNumbers: chosen.requested.join(','),
        audience: audience === null ? null : JSON.stringify(audience),
        mentions: mentions.join(','),
        mediaFile: prepared.mediaFile,
        backgroundColor: prepared.backgroundColor,
        font: prepared.font,
        error: null
      })
    } catch (err) {
      await media.release()
      throw err
    }
    const delivery = track(deliver({
      statusId,
      sessionId,
      messageId,
      ownNumber,
      recipients,
      statusSetting: audience?.statusSetting,
      mentions,
      contactCount,
      content: media.content,
      done: [],
      shown: { type: body.type, content: body.content, caption: prepared.caption, createdAt }
    }).finally(media.release))
    return { statusId: String(statusId), messageId, contactCount, delivery: quiet(delivery) }
  }

  async function deliver (d: Delivery): Promise<SendStatusAnswer> {
    active.add(d.statusId)
    try {
      return await deliverOnce(d)
    } finally {
      active.delete(d.statusId)
    }
  }

  async function deliverOnce (d: Delivery): Promise<SendStatusAnswer> {
    const id = String(d.statusId)
    const ownJid = pnJid(d.ownNumber)
    const committed = new Set(d.done)
    /** written but never acknowledged (the link closed first): they may have it */
    const maybe = new Set<string>()
    /** recorded as "may have it" before their chunk went out (so a crash leaves them on record), not confirmed yet */
    const started = new Set<string>()
    const sentCount = (): number => countContacts(committed, ownJid, d.recipients.length === 0)
    /** recipients without a LID, not sent to (an LID-migrated account) */
    let unreachable: string[] = []
    let result: SendStatusResult
    try {
      result = await platform.sendStatus(d.sessionId, {
        messageId: d.messageId,
        ...(d.content !== undefined ? { content: d.content } : {}),
        ...(d.prepared !== undefined ? { prepared: d.prepared } : {}),
        recipients: d.recipients,
        statusSetting: d.statusSetting,
        ...(d.mentions !== undefined && d.mentions.length > 0 ? { mentions: d.mentions } : {}),
        done: d.done,
        onPrepared: async (payload) => {
          if (!await progress.savePayload(d.statusId, payload)) throw new StatusGone()
        },
        onChunkStart: async (jids) => {
          for (const jid of jids) if (!committed.has(jid)) started.add(jid)
          if (!await progress.unconfirmed(d.statusId, jids)) throw new StatusGone()
        },
        onChunk: async (jids, step) => {
          for (const jid of jids) committed.add(jid)
          try {
            // the chunk and its status-send-progress in one transaction (the event log), fed after the commit
            if (!await progress.commitChunk(d.statusId, jids, sentCount(), progressReport(d, step))) throw new StatusGone()
          } catch (err) {
            for (const jid of jids) { committed.delete(jid); maybe.add(jid) } // not committed: stored as "may have it"
            throw err
          }
          for (const jid of jids) { maybe.delete(jid); started.delete(jid) }
          if (step !== null) eventLog.committed()
        },
        onUnreachable: async (numbers) => {
          unreachable = numbers
          // the numbers and their event in one transaction (the event log)
          const kept = await events.within(async (tx, emit) => {
            if (!await tx.statuses.setUnreachable(d.statusId, numbers)) return false
            emit('statuses-updated', { sessionId: d.sessionId, statusId: id, action: 'unreachable', unreachable: numbers, message: `Status ${id}: ${numbers.length} recipient${numbers.length === 1 ? ' has' : 's have'} no LID and cannot be sent to` })
            return true
          })
          if (!kept) throw new StatusGone()
        },
        onUnconfirmed: async (jids) => {
          for (const jid of jids) if (!committed.has(jid)) maybe.add(jid)
          if (!await progress.unconfirmed(d.statusId, jids)) throw new StatusGone()
        }
      })
    } catch (caught) {
      // recorded before their chunk went out, which then failed before it was written: they do not have it
      const unsent = [...started].filter((jid) => !maybe.has(jid))
      if (unsent.length > 0) await progress.notSent(d.statusId, unsent)
      return { ...await stopped(d, { have: committed.size, maybe: maybe.size, sentCount: sentCount() }, caught), unreachable }
    }
    const reached = d.recipients.length === 0 ? d.contactCount : d.contactCount - unreachable.length
    // every recipient has it (a platform that does not report chunks is taken at its word); the chunks'
    // recipients are committed already, so only the count and any JID no chunk reported are written here
    await progress.commitChunk(d.statusId, result.recipientJids.filter((jid) => !committed.has(jid)), reached)
    // the row's end and its status-sent in one transaction (the event log)
    const finished = await events.within(async (tx, emit) => {
      if (!await tx.statuses.finish(d.statusId, { state: 'sent', sentCount: reached })) return false
      emit('status-sent', {
        sessionId: d.sessionId,
        statusId: id,
        id,
        type: d.shown.type,
        content: d.shown.content,
        caption: d.shown.caption,
        timestamp: iso(d.shown.createdAt),
        platformMessageId: result.messageId,
        contactCount: d.contactCount
      })
      // the seed contract: statuses-updated whenever the sent-statuses list changes (status-sent is the finer event)
      emit('statuses-updated', { sessionId: d.sessionId, statusId: id, action: 'sent', message: `Status ${id} ${sentMessage(reached, unreachable)}` })
      return true
    })
    if (!finished) throw new SendFailed(new StatusGone().message)
    return { statusId: id, message: `Status ${sentMessage(reached, unreachable)}`, platformMessageId: result.messageId, contactCount: d.contactCount, state: 'sent', sentCount: reached, unreachable }
  }

  /**
   * A send that stopped for good: partial when anyone has (or may have) it, so it stays listed and
   * revocable; otherwise removed, with the error answer.
   */
  async function stopped (d: Delivery, { have, maybe, sentCount }: { have: number, maybe: number, sentCount: number }, caught: unknown): Promise<Omit<SendStatusAnswer, 'unreachable'>> {
    const id = String(d.statusId)
    // the platform's own words (they say why it is not connected); the HTTP error keeps the documented message
    const reason = caught instanceof Error ? caught.message : String(caught)
    const err = fromPlatform(caught)
    if (have + maybe === 0) {
      await events.within(async (tx, emit) => {
        if (await tx.statuses.remove(d.statusId)) emit('statuses-updated', { sessionId: d.sessionId, statusId: id, action: 'send-failed', message: `Status ${id} was not sent: ${reason}` })
      })
      if (isCode(err, 'ST_NOT_CONNECTED')) throw err
      log.warn({ err: caught, sessionId: d.sessionId, statusId: d.statusId }, 'sending status failed')
      // the platform's own SendFailed already reads "Failed to send status: …"
      throw isCode(err, 'ST_SEND_FAILED') ? err : new SendFailed(reason)
    }
    const { message, unsure } = stoppedMessage(sentCount, d.contactCount, maybe, reason)
    const kept = await events.within(async (tx, emit) => {
      if (!await tx.statuses.finish(d.statusId, { state: 'partial', sentCount, error: `Sending stopped after ${sentCount} of ${d.contactCount}: ${reason}${unsure}` })) return false
      emit('statuses-updated', { sessionId: d.sessionId, statusId: id, action: 'partial', message: `Status ${id}: ${message}` })
      return true
    })
    if (!kept) throw isCode(err, 'ST_SEND_FAILED') || isCode(err, 'ST_NOT_CONNECTED') ? err : new SendFailed(reason)
    log.warn({ err: caught, sessionId: d.sessionId, statusId: d.statusId, sentCount, unconfirmed: maybe, contactCount: d.contactCount }, 'status send stopped part-way; kept as partial')
    return { statusId: id, message, platformMessageId: d.messageId, contactCount: d.contactCount, state: 'partial', sentCount }
  }

  async function resume (row: InterruptedStatus): Promise<void> {
    // the ones whose chunk went out unacknowledged are sent again (at least once for them)
    const done = await statuses.recipients(row.id, 'confirmed')
    const have = (await statuses.recipients(row.id, 'all')).length
    // the message is stored before the first chunk goes out: without it nothing went out
    if (row.messagePayload === null) { await abandon({ events, log }, row, have, 'the service stopped before it went out'); return }
    const open = await whenOpen({ platform, waiting, closing: () => closing }, row.sessionId, config.sendReconnectWaitMs)
    if ('why' in open) { await abandon({ events, log }, row, have, open.why); return }
    // the first chunk starts with the own number: another account linked meanwhile must not continue it
    if (done.length > 0 && !done.includes(pnJid(open.own))) { await abandon({ events, log }, row, have, 'the session is linked to another account now'); return }
    const { recipients: stored, statusSetting } = storedRecipients(row)
    const mentions = storedMentions(row.mentions)
    const recipients = withMentions(stored, mentions)
    log.info({ sessionId: row.sessionId, statusId: row.id, done: done.length, contactCount: row.contactCount }, 'resuming a send interrupted by a restart')
    await deliver({
      statusId: row.id,
      sessionId: row.sessionId,
      messageId: row.messageId,
      ownNumber: open.own,
      recipients: recipients.filter((n) => n !== open.own),
      statusSetting,
      mentions,
      contactCount: row.contactCount,
      prepared: row.messagePayload,
      done,
      shown: { type: row.type, content: row.content, caption: row.caption, createdAt: row.createdAt }
    }).catch((err: unknown) => { log.warn({ err, sessionId: row.sessionId, statusId: row.id }, 'resumed send failed') })
  }

  /**
   * Starts resuming every row a crash left `sending` (only these sessions' when given: with several
   * nodes, the ones this node owns); returns how many. Each runs in the background.
   */
  async function recover (sessionIds?: string[]): Promise<number> {
    const only = sessionIds === undefined ? null : new Set(sessionIds)
    const rows = (await statuses.interrupted()).filter((r) => (only === null || only.has(r.sessionId)) && !active.has(r.id))
    if (rows.length > 0) log.warn({ count: rows.length }, 'sends interrupted by a restart found; resuming once their sessions reconnect')
    for (const row of rows) {
      void track(resume(row).catch((err: unknown) => { log.error({ err, statusId: row.id }, 'could not resume an interrupted send') }))
    }
    return rows.length
  }

  /** Ends waits for sessions (those resumes end partial) and waits for sends under way, at most `timeoutMs`. */
  async function drain (timeoutMs: number): Promise<void> {
    closing = true
    for (const check of [...waiting]) check()
    if (running.size === 0) return
    let timer: NodeJS.Timeout | undefined
    await Promise.race([
      Promise.allSettled([...running]),
      new Promise((resolve) => { timer = setTimeout(resolve, timeoutMs) })
    ])
    clearTimeout(timer)
    if (running.size > 0) log.warn({ sends: running.size }, 'sends still running at close')
  }

  return { start, recover, drain }
}
