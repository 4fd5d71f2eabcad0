import type { FastifyInstance } from 'fastify'
import type { Kysely } from 'kysely'
import type { DbHandle } from '../../src/db/connection.js'
import type { Database, NewSessionRow } from '../../src/db/database.js'
import { dbOf } from './db.js'

// The one place a test writes a session row without going through the API (a test that only needs a
// session to exist, or a platform test below the service). When the sessions store lands, this is the
// only body to change.

/** an app built by test/helper.ts, an open database, or a bare Kysely over one (e.g. a lease connection) */
export type SessionTarget = FastifyInstance | DbHandle | Kysely<Database>

export interface SessionFields {
  /** default the id */
  name?: string
  /** default `qrcode` */
  authMethod?: 'pairing' | 'qrcode'
  phoneNumber?: string | null
  ownNumber?: string | null
  ownLid?: string | null
  /** the platform accepted the link (default false) */
  linked?: boolean
  /** ms since the epoch (default now) */
  createdAt?: number
}

function kyselyOf (target: SessionTarget): Kysely<Database> {
  if ('insertInto' in target) return target
  if ('dialect' in target) return target.db
  return dbOf(target).db
}

/** Inserts a session row (no platform start, no event): what a test needs for a session to exist. */
export async function insertSession (into: SessionTarget, id: string, fields: SessionFields = {}): Promise<void> {
  const row: NewSessionRow = {
    id,
    name: fields.name ?? id,
    auth_method: fields.authMethod ?? 'qrcode',
    phone_number: fields.phoneNumber ?? null,
    own_number: fields.ownNumber ?? null,
    own_lid: fields.ownLid ?? null,
    created_at: fields.createdAt ?? Date.now(),
    ...(fields.linked !== undefined ? { linked: fields.linked ? 1 : 0 } : {})
  }
  await kyselyOf(into).insertInto('sessions').values(row).execute()
}
