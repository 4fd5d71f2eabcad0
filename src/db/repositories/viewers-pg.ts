import type pg from 'pg'
import { inTransaction } from './pg-tx.js'
import type { DbHandle } from '../connection.js'
import { viewerWriter, type ViewToRecord } from './viewers.js'

/**
 * viewerWriter's PostgreSQL twin (same rows, same rules: one row per (status, viewer), the earliest view
 * time wins, views of unknown statuses are skipped), asynchronous. A stanza's views are one statement,
 * so one transaction: committed when the promise resolves.
 */
export function pgViewerWriter (pool: pg.Pool) {
  async function record (views: ViewToRecord[]): Promise<Map<number, string>> {
    const changed = new Map<number, string>()
    if (views.length === 0) return changed
    // one row per (session, status, viewer), the earliest view: a statement may not upsert a row twice
    const unique = new Map<string, ViewToRecord>()
    for (const v of views) {
      const key = `${v.sessionId}\n${v.messageId}\n${v.number ?? v.jid}`
      const seen = unique.get(key)
      if (seen === undefined || v.viewedAt < seen.viewedAt) unique.set(key, v)
    }
    const rows = [...unique.values()]
    const result = await pool.query<{ status_id: number, session_id: string }>(
      `insert into viewers (status_id, viewer, number, jid, viewed_at, is_real)
       select s.id, v.viewer, v.number, v.jid, v.viewed_at, v.is_real
       from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::bigint[], $7::text[])
         as v(session_id, viewer, number, jid, viewed_at, is_real, message_id)
       join statuses s on s.session_id = v.session_id and s.message_id = v.message_id
       on conflict (status_id, viewer) do update set viewed_at = excluded.viewed_at where excluded.viewed_at < viewers.viewed_at
       returning status_id, (select session_id from statuses where id = status_id) as session_id`,
      [rows.map((v) => v.sessionId), rows.map((v) => v.number ?? v.jid), rows.map((v) => v.number), rows.map((v) => v.jid),
        rows.map((v) => v.viewedAt), rows.map((v) => v.isReal ? 1 : 0), rows.map((v) => v.messageId)])
    for (const r of result.rows) changed.set(r.status_id, r.session_id)
    return changed
  }

  async function mapLids (sessionId: string, mappings: Array<{ lid: string, number: string }>): Promise<Set<number>> {
    return await inTransaction(pool, async (client) => {
      const changed = new Set<number>()
      for (const { lid, number } of mappings) {
        const moved = await client.query<{ status_id: number, viewed_at: number, is_real: number }>(
          `delete from viewers v using statuses s
           where s.id = v.status_id and v.viewer = $1 and v.number is null and s.session_id = $2
           returning v.status_id, v.viewed_at, v.is_real`, [lid, sessionId])
        for (const row of moved.rows) {
          await client.query(
            `insert into viewers (status_id, viewer, number, jid, viewed_at, is_real) values ($1, $2, $2, $3, $4, $5)
             on conflict (status_id, viewer) do update set viewed_at = excluded.viewed_at where excluded.viewed_at < viewers.viewed_at`,
            [row.status_id, number, `${number}@s.whatsapp.net`, row.viewed_at, row.is_real])
          changed.add(row.status_id)
        }
      }
      return changed
    })
  }

  async function unmappedLids (sessionId: string, limit: number): Promise<string[]> {
    const result = await pool.query<{ viewer: string }>(
      'select distinct v.viewer from viewers v join statuses s on s.id = v.status_id where v.number is null and s.session_id = $1 limit $2',
      [sessionId, limit])
    return result.rows.map((r) => r.viewer)
  }

  return { record, mapLids, unmappedLids }
}

/** The dialect's viewer writer (SQLite: synchronous; PostgreSQL: promises). */
export function viewerWriterFor (handle: DbHandle): ReturnType<typeof viewerWriter> | ReturnType<typeof pgViewerWriter> {
  return handle.dialect === 'sqlite' ? viewerWriter(handle.sqlite) : pgViewerWriter(handle.pool)
}
