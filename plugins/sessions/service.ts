import type { FastifyInstance } from 'fastify'
import type { Session } from '../../src/db/stores/sessions.js'
import type { SessionStore } from '../../src/db/stores/sessions.js'
import { BadRequest, NotQrSession, SessionExists, SessionNotFound } from '../../src/errors.js'
import type { AuthMethod, SessionSnapshot } from '../../src/platform/types.js'
import type { SessionView } from '../../schemas/session.js'
import type { DomainEvents } from '../domain-events/index.js'
import { sessionView } from './view.js'
import { canSee, type KeyStore, type Principal } from '../keys/store.js'

/** What the session service uses of the other decorators. */
export interface SessionDeps {
  sessions: SessionStore
  /** whether a status still uses the media file (the statuses' store) */
  mediaInUse: (file: string) => Promise<boolean>
  platform: Pick<FastifyInstance['platform'], 'snapshot' | 'removeSession' | 'restartSession' | 'updatePhoneNumber' | 'requestPairingCode'>
  mediaStore: Pick<FastifyInstance['mediaStore'], 'remove'>
  events: Pick<DomainEvents, 'emit' | 'within'>
  /** which node holds a new session (this one, its lease stored with it in a cluster) and opens it; others' statuses from their owners' reports */
  cluster: Pick<FastifyInstance['cluster'], 'holdNew' | 'openNew' | 'reported'>
  /** scoped keys: a session a key creates joins its list; a deleted one leaves every list */
  keys?: Pick<KeyStore, 'sessionCreated' | 'sessionDeleted'>
}

export interface NewSession {
  sessionId: string
  sessionName: string
  authMethod: AuthMethod
  phoneNumber: string | null
}

function remoteSnapshot (row: Session, status: string | null | undefined): SessionSnapshot | null {
  if (status === null || status === undefined) return null
  const known = ['connecting', 'open', 'close', 'logged-out'].includes(status) ? status as SessionSnapshot['status'] : 'close'
  return { sessionId: row.id, connected: known === 'open', status: known, ownNumber: row.ownNumber, pairingCode: null, qrCode: null }
}

/** Sessions: their rows, their platform connection and the events that tell clients about them. */
export function createSessionService (deps: SessionDeps) {
  const { platform, mediaStore, events, cluster, keys } = deps
  const { sessions, mediaInUse } = deps

  async function requireSession (sessionId: string): Promise<Session> {
    const row = await sessions.find(sessionId)
    if (row === undefined) throw new SessionNotFound()
    return row
  }

  /** Stores the session, announces it and starts linking it. `creator`: the key that asked (a scoped one gets it on its list). */
  async function create (session: NewSession, creator: Principal | null = null): Promise<void> {
    const { sessionId, sessionName, authMethod, phoneNumber } = session
    const createdAt = Date.now()
    const row = { id: sessionId, name: sessionName, authMethod, phoneNumber, createdAt }
    const inserted = await events.within(async (tx, emit) => {
      if (!await tx.sessions.insert(row)) return false
      // this node's (in a cluster: its lease, in this transaction, so no node sees the session without an owner)
      await cluster.holdNew(tx, sessionId)
      emit('session-created', { sessionId, sessionName, phoneNumber, authMethod, createdAt: new Date(createdAt).toISOString() })
      return true
    })
    if (!inserted) throw new SessionExists()
    await keys?.sessionCreated(sessionId, creator)
    await cluster.openNew(sessionId)
  }

  /** Every session, or those `viewer` (a scoped key) may see. */
  async function list (viewer: Principal | null = null): Promise<SessionView[]> {
    const all = await sessions.list()
    const rows = viewer === null ? all : all.filter((r) => canSee(viewer, r.id))
    // sessions on other nodes: the status their owner last reported (the codes stay with the owner)
    const reported = await cluster.reported()
    return rows.map((row) => sessionView(row, platform.snapshot(row.id) ?? remoteSnapshot(row, reported.get(row.id))))
  }

  async function get (sessionId: string): Promise<SessionView> {
    return sessionView(await requireSession(sessionId), platform.snapshot(sessionId))
  }

  /** Logs the device out, then removes the row (statuses, viewers and auth state go by cascade) and media no other status uses. */
  async function remove (sessionId: string): Promise<void> {
    await requireSession(sessionId)
    await platform.removeSession(sessionId)
    const media = await sessions.mediaFiles(sessionId)
    await events.within(async (tx, emit) => {
      await tx.sessions.remove(sessionId)
      emit('session-deleted', { sessionId })
    })
    await keys?.sessionDeleted(sessionId)
    for (const file of media) {
      if (!await mediaInUse(file)) await mediaStore.remove(file)
    }
  }

  async function restart (sessionId: string): Promise<void> {
    const row = await requireSession(sessionId)
    await platform.restartSession(row.id)
  }

  async function updatePhoneNumber (sessionId: string, phoneNumber: string): Promise<void> {
    const row = await requireSession(sessionId)
    if (row.authMethod !== 'pairing') throw new BadRequest('This session links by QR code and has no phone number')
    await sessions.setPhoneNumber(row.id, phoneNumber)
    await platform.updatePhoneNumber(row.id, phoneNumber)
  }

  /** A fresh pairing code, and the number it links (as stored once the code was issued). */
  async function requestPairingCode (sessionId: string): Promise<{ pairingCode: string, phoneNumber: string | null }> {
    const row = await requireSession(sessionId)
    const pairingCode = await platform.requestPairingCode(row.id)
    const fresh = await requireSession(row.id)
    return { pairingCode, phoneNumber: fresh.phoneNumber }
  }

  /** The session's view; only for sessions that link by QR code. */
  async function qrCode (sessionId: string): Promise<SessionView> {
    const row = await requireSession(sessionId)
    if (row.authMethod !== 'qrcode') throw new NotQrSession()
    return sessionView(row, platform.snapshot(row.id))
  }

  return { create, list, get, remove, restart, updatePhoneNumber, requestPairingCode, qrCode }
}
