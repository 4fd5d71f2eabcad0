import { sql, type Kysely } from 'kysely'
import type { Database, NewUploadRow, UploadTable } from '../database.js'

type Db = Kysely<Database>

/** The uploads table: a stored media file's row, written together with the rename that puts the file in place. */
export interface UploadStore {
  /**
   * Inserts the row and runs `place` (the synchronous rename that puts its file in place) in one
   * transaction: committed only after the file is in place, rolled back when `place` throws; when the
   * commit itself fails after the rename, `unplace` takes the file away. Resolves once committed.
   */
  commit: (row: Required<NewUploadRow>, place: () => void, unplace: () => void) => Promise<void>
  /** the row alone (an upload whose file is placed elsewhere, e.g. an S3 bucket) */
  insert: (row: Required<NewUploadRow>) => Promise<void>
  remove: (filename: string) => Promise<void>
  find: (filename: string) => Promise<{ kind: UploadTable['kind'], mime_type: string } | undefined>
  /** every stored upload's name (reconciling the folder with the rows) */
  names: () => Promise<string[]>
  /** Uploads created before `before` that no status and no schedule refers to. */
  unusedBefore: (before: number) => Promise<string[]>
  /**
   * Whether other nodes may share this database (PostgreSQL): a file in the upload folder without a row
   * may then be another node's upload in progress.
   */
  readonly shared: boolean
}

/** The queries both backends run the same; `shared`: several nodes may use the database (PostgreSQL). */
export function uploadStore (db: Db, shared: boolean): UploadStore {
  return {
    shared,
    async commit (row, place, unplace) {
      let placed = false
      try {
        await db.transaction().execute(async (trx) => {
          await trx.insertInto('uploads').values(row).execute()
          place()
          placed = true
        })
      } catch (err) {
        if (placed) unplace()
        throw err
      }
    },
    async insert (row) {
      await db.insertInto('uploads').values(row).execute()
    },
    async remove (filename) {
      await db.deleteFrom('uploads').where('filename', '=', filename).execute()
    },
    async find (filename) {
      return await db.selectFrom('uploads').select(['kind', 'mime_type']).where('filename', '=', filename).executeTakeFirst()
    },
    async names () {
      return (await db.selectFrom('uploads').select('filename').execute()).map((r) => r.filename)
    },
    async unusedBefore (before) {
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
  }
}
