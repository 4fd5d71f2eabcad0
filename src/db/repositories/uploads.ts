import type SQLite from 'better-sqlite3'
import type pg from 'pg'
import { sql, type Kysely } from 'kysely'
import type { DbHandle } from '../connection.js'
import type { Database, NewUploadRow, UploadTable } from '../database.js'
import { inTransaction } from './pg-tx.js'

type Db = Kysely<Database>

/**
 * Inserts an upload's row and runs `place` (the rename that puts its file in place) in one synchronous
 * transaction: the row is committed only after the file is in place, and rolled back when `place` throws.
 */
export function uploadCommitter (sqlite: SQLite.Database): (row: Required<NewUploadRow>, place: () => void) => void {
  const insert = sqlite.prepare<[string, string, string, number, number]>('insert into uploads (filename, kind, mime_type, size, created_at) values (?, ?, ?, ?, ?)')
  return sqlite.transaction((row: Required<NewUploadRow>, place: () => void) => {
    insert.run(row.filename, row.kind, row.mime_type, row.size, row.created_at)
    place()
  })
}

/** The row and the rename, committed together: returns once committed (SQLite: synchronously). */
export type UploadCommit = (row: Required<NewUploadRow>, place: () => void, unplace: () => void) => void | Promise<void>

/**
 * uploadCommitter's PostgreSQL twin: the row is inserted in a transaction, `place` runs inside it, and
 * the commit follows; a failed rename rolls the row back, a failed commit takes the file away (`unplace`).
 */
export function pgUploadCommitter (pool: pg.Pool): UploadCommit {
  return async (row, place, unplace) => {
    let placed = false
    try {
      await inTransaction(pool, async (client) => {
        await client.query('insert into uploads (filename, kind, mime_type, size, created_at) values ($1, $2, $3, $4, $5)',
          [row.filename, row.kind, row.mime_type, row.size, row.created_at])
        place()
        placed = true
      })
    } catch (err) {
      if (placed) unplace()
      throw err
    }
  }
}

export function uploadCommitterFor (handle: DbHandle): UploadCommit {
  return handle.dialect === 'sqlite' ? uploadCommitter(handle.sqlite) : pgUploadCommitter(handle.pool)
}

export async function deleteUpload (db: Db, filename: string): Promise<void> {
  await db.deleteFrom('uploads').where('filename', '=', filename).execute()
}

export async function findUpload (db: Db, filename: string): Promise<{ kind: UploadTable['kind'], mime_type: string } | undefined> {
  return await db.selectFrom('uploads').select(['kind', 'mime_type']).where('filename', '=', filename).executeTakeFirst()
}

/** Uploads created before `before` that no status and no schedule refers to. */
export async function unusedUploadsBefore (db: Db, before: number): Promise<string[]> {
  const rows = await db.selectFrom('uploads as u')
    .select('u.filename')
    .where('u.created_at', '<', before)
    .where(({ not, exists, selectFrom }) => not(exists(
      selectFrom('statuses as s').select(sql`1`.as('one')).whereRef('s.media_file', '=', 'u.filename')
    )))
    // nor any schedule (issue 24)
    .where(({ not, exists, selectFrom }) => not(exists(
      selectFrom('schedules as sc').select(sql`1`.as('one')).whereRef('sc.media_file', '=', 'u.filename')
    )))
    .execute()
  return rows.map((r) => r.filename)
}
