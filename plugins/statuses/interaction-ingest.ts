import fp from 'fastify-plugin'
import { interactionLidWriterFor, recordReaction, recordReply } from '../../src/db/repositories/interactions.js'
import type { InteractionSink, StatusInteraction } from '../../src/platform/types.js'
import { toReaction, toReply } from './api-shapes.js'
import type { StatusDeps } from './service.js'

/**
 * The interaction sink: the platform hands over each reaction or reply to a status while it decrypts the
 * message, before Baileys acknowledges it, and it is committed here (one statement; the message id makes
 * a redelivery a no-op). Each change goes out as a status-reaction / status-reply event. Messages about
 * statuses this service does not know are dropped: the service stores no other chat.
 */
export function createInteractionIngest (deps: Pick<StatusDeps, 'db' | 'events' | 'log'>) {
  const { db: handle, events, log } = deps
  const lids = interactionLidWriterFor(handle)
  let closed = false
  const stats = { reactions: 0, replies: 0, ignored: 0 }

  async function commit (sessionId: string, i: StatusInteraction): Promise<void> {
    if (closed) throw new Error('interaction ingest is closed')
    const from = { number: i.fromNumber, jid: i.fromNumber === null ? i.fromJid : `${i.fromNumber}@s.whatsapp.net` }
    // the row and its event in one transaction (the event log)
    if (i.kind === 'reaction') {
      const row = await events.within(async (trx, emit) => {
        const r = await recordReaction(trx, sessionId, { ...from, statusMessageId: i.statusMessageId, messageId: i.messageId, emoji: i.emoji, at: i.at })
        if (r !== undefined) emit('status-reaction', { sessionId, statusId: String(r.status_id), reaction: toReaction(r), ...(r.emoji === '' ? { removed: true as const } : {}) })
        return r
      })
      if (row === undefined) stats.ignored++
      else stats.reactions++
    } else {
      const row = await events.within(async (trx, emit) => {
        const r = await recordReply(trx, sessionId, { ...from, statusMessageId: i.statusMessageId, messageId: i.messageId, text: i.text, at: i.at })
        if (r !== undefined) emit('status-reply', { sessionId, statusId: String(r.status_id), reply: toReply(r) })
        return r
      })
      if (row === undefined) stats.ignored++
      else stats.replies++
    }
  }

  function lidsMapped (sessionId: string, mappings: Array<{ lid: string, number: string }>): void | Promise<void> {
    if (closed) return
    const changed = lids.mapLids(sessionId, mappings)
    const report = (c: Set<number>): void => {
      if (c.size > 0) log.info({ sessionId, statuses: c.size }, 'reactions and replies stored under a LID got their number')
    }
    if (changed instanceof Promise) return changed.then(report)
    report(changed)
  }

  function unmappedLids (sessionId: string, limit: number): string[] | Promise<string[]> {
    return closed ? [] : lids.unmappedLids(sessionId, limit)
  }

  // the platform's side is Promise-only (issue 34); the interaction store's own signatures follow with its port
  const sink: InteractionSink = {
    commit,
    lidsMapped: async (sessionId, mappings) => { await lidsMapped(sessionId, mappings) },
    unmappedLids: async (sessionId, limit) => await unmappedLids(sessionId, limit)
  }
  return {
    sink,
    stats: (): Readonly<typeof stats> => ({ ...stats }),
    /** later messages are refused (so never acknowledged) and delivered again after a restart */
    stop (): void { closed = true }
  }
}

export type InteractionIngest = ReturnType<typeof createInteractionIngest>

declare module 'fastify' {
  interface FastifyInstance {
    /** the sink the platform commits reactions and replies to statuses through */
    interactionIngest: InteractionIngest
  }
}

// Registered before the platform, which is created with its sink.
export default fp(async (app) => {
  const ingest = createInteractionIngest({ db: app.db, events: app.domainEvents, log: app.log.child({ plugin: 'interaction-ingest' }) })
  app.decorate('interactionIngest', ingest)
  app.addHook('onClose', async () => { ingest.stop() })
}, { name: 'interaction-ingest', dependencies: ['db', 'domain-events'] })
