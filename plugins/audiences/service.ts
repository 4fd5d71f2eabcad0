import { randomBytes } from 'node:crypto'
import type { FastifyBaseLogger } from 'fastify'
import type { DbHandle } from '../../src/db/connection.js'
import { deleteAudience, findAudience, findAudienceInfo, insertAudience, listAudiences, numbersOf, updateAudience, type AudienceInfo } from '../../src/db/repositories/audiences.js'
import { findSession } from '../../src/db/repositories/sessions.js'
import { AudienceNotFound, BadRequest, SessionNotFound } from '../../src/errors.js'
import type { Audience, AudiencePage, AudienceSummary, CreateAudienceBody, UpdateAudienceBody } from '../../schemas/audience.js'
import { pageOf, pageRead, type PageQuery } from '../../src/paging.js'
import { parseNumberList } from './numbers.js'

// Saved audiences (issue 24): named lists of up to 50,000 numbers per session, each checked (every bad
// entry named) and de-duplicated, that send-status `audience: { type: 'saved' }` posts to.

export interface AudienceServiceDeps {
  db: DbHandle
  log: FastifyBaseLogger
  now?: () => number
}

const iso = (ms: number): string => new Date(ms).toISOString()

function toSummary (r: AudienceInfo): AudienceSummary {
  return { id: r.id, name: r.name, count: r.number_count, createdAt: iso(r.created_at), updatedAt: iso(r.updated_at) }
}

function checkName (name: string): string {
  const trimmed = name.trim()
  if (trimmed === '') throw new BadRequest('body.name must not be blank')
  return trimmed
}

function checkNumbers (numbers: readonly string[]): string[] {
  const out = parseNumberList(numbers, 'body.numbers')
  if (out.length === 0) throw new BadRequest('body.numbers must hold at least one number')
  return out
}

export function createAudienceService (deps: AudienceServiceDeps) {
  const db = deps.db.db
  const now = deps.now ?? Date.now

  async function requireSession (sessionId: string): Promise<void> {
    if (await findSession(db, sessionId) === undefined) throw new SessionNotFound()
  }

  async function requireInfo (sessionId: string, id: string): Promise<AudienceInfo> {
    await requireSession(sessionId)
    const row = await findAudienceInfo(db, sessionId, id)
    if (row === undefined) throw new AudienceNotFound()
    return row
  }

  async function create (sessionId: string, body: CreateAudienceBody): Promise<AudienceSummary> {
    await requireSession(sessionId)
    const name = checkName(body.name)
    const numbers = checkNumbers(body.numbers)
    const id = `aud_${randomBytes(12).toString('base64url')}`
    const t = now()
    await insertAudience(db, { id, session_id: sessionId, name, numbers: numbers.join(','), number_count: numbers.length, created_at: t, updated_at: t })
    deps.log.info({ sessionId, audienceId: id, count: numbers.length }, 'audience saved')
    return { id, name, count: numbers.length, createdAt: iso(t), updatedAt: iso(t) }
  }

  async function list (sessionId: string, query: PageQuery): Promise<AudiencePage> {
    await requireSession(sessionId)
    const { limit, fetch, after } = pageRead(query)
    const { page, nextCursor } = pageOf(await listAudiences(db, sessionId, { limit: fetch, after }), limit, (row) => row.seq)
    return { audiences: page.map(toSummary), nextCursor }
  }

  async function get (sessionId: string, id: string): Promise<Audience> {
    await requireSession(sessionId)
    const row = await findAudience(db, sessionId, id)
    if (row === undefined) throw new AudienceNotFound()
    return { ...toSummary(row), numbers: numbersOf(row) }
  }

  /** Changes the name, the numbers (replaced whole) or both. */
  async function update (sessionId: string, id: string, patch: UpdateAudienceBody): Promise<AudienceSummary> {
    const row = await requireInfo(sessionId, id)
    const name = patch.name === undefined ? undefined : checkName(patch.name)
    const numbers = patch.numbers === undefined ? undefined : checkNumbers(patch.numbers)
    const changes = {
      ...(name !== undefined ? { name } : {}),
      ...(numbers !== undefined ? { numbers: numbers.join(','), number_count: numbers.length } : {})
    }
    const t = now()
    if (!await updateAudience(db, sessionId, id, changes, t)) throw new AudienceNotFound()
    // the row read above with this write on it (not read again)
    return toSummary({ ...row, ...changes, updated_at: t })
  }

  async function remove (sessionId: string, id: string): Promise<{ id: string, message: string }> {
    await requireSession(sessionId)
    if (!await deleteAudience(db, sessionId, id)) throw new AudienceNotFound()
    return { id, message: 'Audience deleted' }
  }

  return { create, list, get, update, replace: update, remove }
}

export type AudienceService = ReturnType<typeof createAudienceService>
