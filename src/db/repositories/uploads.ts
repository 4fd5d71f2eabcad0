import { sql, type Kysely } from 'kysely'
import type { Database, NewUploadRow } from '../database.js'

type Db = Kysely<Database>

export async function insertUpload (db: Db, row: NewUploadRow): Promise<void> {
  await db.insertInto('uploads').values(row).execute()
}

export async function deleteUpload (db: Db, filename: string): Promise<void> {
  await db.deleteFrom('uploads').where('filename', '=', filename).execute()
}

export async function findUpload (db: Db, filename: string): Promise<{ kind: 'image' | 'video', mime_type: string } | undefined> {
  return await db.selectFrom('uploads').select(['kind', 'mime_type']).where('filename', '=', filename).executeTakeFirst()
}

/** Uploads created before `before` that no status refers to. */
export async function unusedUploadsBefore (db: Db, before: number): Promise<string[]> {
  const rows = await db.selectFrom('uploads as u')
    .select('u.filename')
    .where('u.created_at', '<', before)
    .where(({ not, exists, selectFrom }) => not(exists(
      selectFrom('statuses as s').select(sql`1`.as('one')).whereRef('s.media_file', '=', 'u.filename')
    )))
    .execute()
  return rows.map((r) => r.filename)
}
