import fp from 'fastify-plugin'
import { contactJid } from '../../src/jid.js'
import type { InteractionSink, StatusInteraction } from '../../src/platform/types.js'
import type { FastifyBaseLogger } from 'fastify'
import type { Stores } from '../../src/db/stores/index.js'
import type { DomainEvents } from '../domain-events/index.js'
import { toReaction, toReply } from '../../src/api-shapes.js'

/** What the interaction ingest uses of the other decorators. */
export interface InteractionIngestDeps {
  stores: Pick<Stores, 'viewers'>
  events: Pick<DomainEvents, 'emit' | 'within'>
  log: FastifyBaseLogger
}

/**
 * The interaction sink: the platform hands over each reaction or reply to a status while it decrypts the
 * message, before Baileys acknowledges it, and it is committed here (one statement; the message id makes
 * a redelivery a no-op). Each change goes out as a status-reaction / status-reply event. Messages about
 * statuses this service does not know are dropped: the service stores no other chat.
 */
export function createInteractionIngest (deps: InteractionIngestDeps) {
  const { stores: { viewers }, events, log } = deps
  let closed = false
  const stats = { reactions: 0, replies: 0, ignored: 0 }

  async function commit (sessionId: string, i: StatusInteraction): Promise<void> {
    if (closed) throw new Error('interaction ingest is closed')
    const from = { number: i.fromNumber, jid: contactJid(i.fromNumber, i.fromJid) }
    // the row and its event in one transaction (the event log)
    if (i.kind === 'reaction') {
      const row = await events.within(async (tx, emit) => {
        const reaction = { ...from, statusMessageId: i.statusMessageId, messageId: i.messageId, emoji: i.emoji, at: i.at }
        const r = await tx.viewers.recordReaction(sessionId, reaction)
        if (r !== undefined) emit('status-reaction', { sessionId, statusId: String(r.statusId), reaction: toReaction(r), ...(r.emoji === '' ? { removed: true as const } : {}) })
        return r
      })
      if (row === undefined) stats.ignored++
      else stats.reactions++
    } else {
      const row = await events.within(async (tx, emit) => {
        const r = await tx.viewers.recordReply(sessionId, { ...from, statusMessageId: i.statusMessageId, messageId: i.messageId, text: i.text, at: i.at })
        if (r !== undefined) emit('status-reply', { sessionId, statusId: String(r.statusId), reply: toReply(r) })
        return r
      })
      if (row === undefined) stats.ignored++
      else stats.replies++
    }
  }

  async function lidsMapped (sessionId: string, mappings: Array<{ lid: string, number: string }>): Promise<void> {
    if (closed) return
    const changed = await viewers.mapInteractionLids(sessionId, mappings)
    if (changed.size > 0) log.info({ sessionId, statuses: changed.size }, 'reactions and replies stored under a LID got their number')
  }

  async function unmappedLids (sessionId: string, limit: number): Promise<string[]> {
    return closed ? [] : await viewers.unmappedInteractionLids(sessionId, limit)
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

// The platform depends on this plugin: it is created with its sink.
export default fp(async (app) => {
  const ingest = createInteractionIngest({ stores: app.stores, events: app.domainEvents, log: app.log.child({ plugin: 'interaction-ingest' }) })
  app.decorate('interactionIngest', ingest)
  app.addHook('onClose', async () => { ingest.stop() })
}, { name: 'interaction-ingest', dependencies: ['db', 'domain-events'] })
