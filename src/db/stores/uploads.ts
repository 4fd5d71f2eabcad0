import { sql, type Kysely } from 'kysely'
import type { Database, NewUploadRow } from '../database.js'

type Db = Kysely<Database>

/** What kind of media an upload holds. */
export type UploadKind = 'image' | 'video' | 'audio'

/** A stored media file (the port's own type; plugins never see the table's row). */
export interface Upload {
  filename: string
  kind: UploadKind
  mimeType: string
  /** bytes */
  size: number
  createdAt: number
}

/** The one Upload → row mapping, for both backends. */
function toUploadRow (u: Upload): Required<NewUploadRow> {
  return { filename: u.filename, kind: u.kind, mime_type: u.mimeType, size: u.size, created_at: u.createdAt }
}

/** The uploads table: a stored media file's row, written together with the rename that puts the file in place. */
export interface UploadStore {
  /**
   * Inserts the row and runs `place` (the synchronous rename that puts its file in place) in one
   * transaction: committed only after the file is in place, rolled back when `place` throws; when the
   * commit itself fails after the rename, `unplace` takes the file away. Resolves once committed.
   */
  commit: (upload: Upload, place: () => void, unplace: () => void) => Promise<void>
  /** the row alone (an upload whose file is placed elsewhere, e.g. an S3 bucket) */
  insert: (upload: Upload) => Promise<void>
  remove: (filename: string) => Promise<void>
  find: (filename: string) => Promise<Pick<Upload, 'kind' | 'mimeType'> | undefined>
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
    async commit (upload, place, unplace) {
      const row = toUploadRow(upload)
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
    async insert (upload) {
      await db.insertInto('uploads').values(toUploadRow(upload)).execute()
    },
    async remove (filename) {
      await db.deleteFrom('uploads').where('filename', '=', filename).execute()
    },
    async find (filename) {
      return await db.selectFrom('uploads').select(['kind', 'mime_type as mimeType']).where('filename', '=', filename).executeTakeFirst()
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
