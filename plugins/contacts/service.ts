import type { FastifyBaseLogger } from 'fastify'
import type { Contact, ContactStore } from '../../src/db/stores/contacts.js'
import { SessionNotFound } from '../../src/errors.js'
import { pageOf, pageRead } from '../../src/paging.js'
import { writeOrder } from '../../src/db/write-order.js'
import type { PhoneContact, PhoneSink, PhoneStatusPrivacy, StatusPrivacyMode } from '../../src/platform/types.js'
import type { ContactPage, ContactsQuery, PhoneContactView, StatusPrivacyView } from '../../schemas/contacts.js'

// The phone's saved contacts and status privacy (issue 24): the platform hands them over through the sink as
// app-state sync and the status privacy query deliver them; the routes and the audiences read them here.

export interface ContactsDeps {
  contacts: ContactStore
  /** whether the session is known (404 otherwise) */
  sessionExists: (sessionId: string) => Promise<boolean>
  log: FastifyBaseLogger
  now?: () => number
}

const view = (r: Pick<Contact, 'number' | 'lid' | 'name'>): PhoneContactView => ({ number: r.number, lid: r.lid, name: r.name })

export function createContactsService (deps: ContactsDeps) {
  const store = deps.contacts
  const now = deps.now ?? Date.now
  /** one session's writes commit in the order the platform made them */
  const writes = writeOrder()
  let closed = false

  const inOrder = (sessionId: string, write: () => Promise<void>): Promise<void> => closed ? Promise.resolve() : writes.run(sessionId, write)

  const sink: PhoneSink = {
    contactsChanged: (sessionId, change) => inOrder(sessionId, async () => {
      await store.change(sessionId, change, now())
      deps.log.debug({ sessionId, saved: change.saved.length, removed: change.removed.length }, 'phone contacts changed')
    }),
    contactsReplaced: (sessionId, contacts: PhoneContact[]) => inOrder(sessionId, async () => {
      const gone = await store.replace(sessionId, contacts, now())
      deps.log.info({ sessionId, contacts: contacts.length, removed: gone.length }, 'phone contacts synced in full')
    }),
    statusPrivacy: (sessionId, privacy: PhoneStatusPrivacy) => inOrder(sessionId, async () => {
      await store.saveStatusPrivacy(sessionId, privacy.mode, privacy.numbers, now())
      deps.log.debug({ sessionId, mode: privacy.mode, numbers: privacy.numbers.length }, 'phone status privacy stored')
    }),
    forget: (sessionId) => inOrder(sessionId, async () => { await store.forget(sessionId) })
  }

  async function requireSession (sessionId: string): Promise<void> {
    if (!await deps.sessionExists(sessionId)) throw new SessionNotFound()
  }

  return {
    /** where the platform hands over what the phone shares */
    sink,

    /** Every saved contact of the phone (what send-status `audience` resolves `contacts` from); [] when none is known. */
    async savedNumbers (sessionId: string): Promise<Array<{ number: string | null, lid: string | null, name: string | null }>> {
      return (await store.all(sessionId)).map(view)
    },

    /** The phone's status privacy as last read from it; null while not known. */
    async statusPrivacy (sessionId: string): Promise<{ mode: StatusPrivacyMode, numbers: string[] } | null> {
      const row = await store.statusPrivacy(sessionId)
      return row === undefined ? null : { mode: row.mode, numbers: row.numbers }
    },

    /** GET …/contacts: one page; 404 for an unknown session. */
    async list (sessionId: string, q: ContactsQuery): Promise<ContactPage> {
      await requireSession(sessionId)
      const { limit, fetch, after } = pageRead(q)
      const { page, nextCursor } = pageOf(await store.page(sessionId, { limit: fetch, after, search: q.search }), limit, (row) => row.id)
      return { contacts: page.map(view), nextCursor }
    },

    /** GET …/status-privacy; 404 for an unknown session. */
    async privacy (sessionId: string): Promise<StatusPrivacyView> {
      await requireSession(sessionId)
      const row = await store.statusPrivacy(sessionId)
      return row === undefined
        ? { mode: null, numbers: [], updatedAt: null }
        : { mode: row.mode, numbers: row.numbers, updatedAt: new Date(row.updatedAt).toISOString() }
    },

    /** Waits for the writes under way; later ones are dropped (the platform hands them over again after a restart). */
    async close (): Promise<void> {
      closed = true
      await writes.idle()
    }
  }
}

export type ContactsService = ReturnType<typeof createContactsService>
