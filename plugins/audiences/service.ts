import { randomBytes } from 'node:crypto'
import type { FastifyBaseLogger } from 'fastify'
import type { AudienceInfo, AudienceStore } from '../../src/db/stores/audiences.js'
import { AudienceNotFound, BadRequest, SessionNotFound } from '../../src/errors.js'
import type { Audience, AudiencePage, AudienceSummary, CreateAudienceBody, UpdateAudienceBody } from '../../schemas/audience.js'
import { pageOf, pageRead, type PageQuery } from '../../src/paging.js'
import { parseNumberList } from './numbers.js'

// Saved audiences (issue 24): named lists of up to 50,000 numbers per session, each checked (every bad
// entry named) and de-duplicated, that send-status `audience: { type: 'saved' }` posts to.

export interface AudienceServiceDeps {
  audiences: AudienceStore
  /** whether the session is known (404 otherwise) */
  sessionExists: (sessionId: string) => Promise<boolean>
  log: FastifyBaseLogger
  now?: () => number
}

const iso = (ms: number): string => new Date(ms).toISOString()

function toSummary (r: AudienceInfo): AudienceSummary {
  return { id: r.id, name: r.name, count: r.numberCount, createdAt: iso(r.createdAt), updatedAt: iso(r.updatedAt) }
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
  const store = deps.audiences
  const now = deps.now ?? Date.now

  async function requireSession (sessionId: string): Promise<void> {
    if (!await deps.sessionExists(sessionId)) throw new SessionNotFound()
  }

  async function requireInfo (sessionId: string, id: string): Promise<AudienceInfo> {
    await requireSession(sessionId)
    const row = await store.findInfo(sessionId, id)
    if (row === undefined) throw new AudienceNotFound()
    return row
  }

  async function create (sessionId: string, body: CreateAudienceBody): Promise<AudienceSummary> {
    await requireSession(sessionId)
    const name = checkName(body.name)
    const numbers = checkNumbers(body.numbers)
    const id = `aud_${randomBytes(12).toString('base64url')}`
    const t = now()
    await store.insert({ id, sessionId, name, numbers, createdAt: t, updatedAt: t })
    deps.log.info({ sessionId, audienceId: id, count: numbers.length }, 'audience saved')
    return { id, name, count: numbers.length, createdAt: iso(t), updatedAt: iso(t) }
  }

  async function list (sessionId: string, query: PageQuery): Promise<AudiencePage> {
    await requireSession(sessionId)
    const { limit, fetch, after } = pageRead(query)
    const { page, nextCursor } = pageOf(await store.list(sessionId, { limit: fetch, after }), limit, (row) => row.seq)
    return { audiences: page.map(toSummary), nextCursor }
  }

  async function get (sessionId: string, id: string): Promise<Audience> {
    await requireSession(sessionId)
    const row = await store.find(sessionId, id)
    if (row === undefined) throw new AudienceNotFound()
    return { ...toSummary(row), numbers: row.numbers }
  }

  /** Changes the name, the numbers (replaced whole) or both. */
  async function update (sessionId: string, id: string, patch: UpdateAudienceBody): Promise<AudienceSummary> {
    const row = await requireInfo(sessionId, id)
    const name = patch.name === undefined ? undefined : checkName(patch.name)
    const numbers = patch.numbers === undefined ? undefined : checkNumbers(patch.numbers)
    const t = now()
    if (!await store.update(sessionId, id, { name, numbers }, t)) throw new AudienceNotFound()
    // the row read above with this write on it (not read again)
    return toSummary({ ...row, ...(name !== undefined ? { name } : {}), ...(numbers !== undefined ? { numberCount: numbers.length } : {}), updatedAt: t })
  }

  async function remove (sessionId: string, id: string): Promise<{ id: string, message: string }> {
    await requireSession(sessionId)
    if (!await store.remove(sessionId, id)) throw new AudienceNotFound()
    return { id, message: 'Audience deleted' }
  }

  return { create, list, get, update, replace: update, remove }
}

export type AudienceService = ReturnType<typeof createAudienceService>
