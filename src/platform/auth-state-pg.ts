import type pg from 'pg'
import type { DbHandle } from '../db/connection.js'
import { inTransaction } from '../db/repositories/pg-tx.js'
import { sqliteAuthBackend, type AuthBackend, type KeyRow } from './auth-state.js'

// Baileys' auth state on PostgreSQL. Baileys reads keys synchronously in places (numberForLid while a
// receipt stanza is being committed), so a session's rows are loaded in one query before its socket
// starts and reads are answered from them; this node owns the session, so nobody else writes them.
// Writes go out in order, one queue per session, each a transaction; keys.set returns the commit's
// promise (Baileys awaits it before acting on what the keys protect), creds writes are queued the same
// way. The loaded rows follow commits (a failed write changes nothing); clearing starts a new generation,
// so a write of the old one that commits afterwards cannot bring its rows back into the loaded ones.
// A write that fails is reported through `onError` (and rejects the promise Baileys awaits).
// `pending` tells the send gate (send-gate.ts) what a session's next frame must wait for, since Baileys
// does not await creds writes.

interface Loaded {
  generation: number
  creds: string | undefined
  keys: Map<string, Map<string, string>>
}

export function pgAuthBackend (pool: pg.Pool, onError: (err: unknown, what: string) => void): AuthBackend {
  const loaded = new Map<string, Loaded>()
  /** per session with writes not yet settled: resolves once they have, true when every one committed */
  const tails = new Map<string, Promise<boolean>>()

  let generations = 0
  const entry = (sessionId: string): Loaded => {
    let l = loaded.get(sessionId)
    if (l === undefined) { l = { generation: ++generations, creds: undefined, keys: new Map() }; loaded.set(sessionId, l) }
    return l
  }
  /** applies a committed write to the loaded rows, unless they were cleared since it was queued */
  const whenCommitted = (sessionId: string, done: Promise<void>, apply: (l: Loaded) => void): Promise<void> => {
    const generation = entry(sessionId).generation
    const applied = done.then(() => {
      const l = loaded.get(sessionId)
      if (l !== undefined && l.generation === generation) apply(l)
    })
    // callers that do not await (creds.update) must not leave a rejection unhandled: onError reported it
    applied.catch(() => {})
    return applied
  }

  /** runs `work` after the session's earlier writes, in one transaction; the returned promise rejects when it fails */
  function queue (sessionId: string, what: string, work: (client: pg.PoolClient) => Promise<void>): Promise<void> {
    const previous = tails.get(sessionId) ?? Promise.resolve(true)
    const run = previous.then(async () => { await inTransaction(pool, work) })
    void run.catch((err: unknown) => { onError(err, what) })
    const tail = previous.then(async (ok) => await run.then(() => ok, () => false))
    tails.set(sessionId, tail)
    void tail.then(() => { if (tails.get(sessionId) === tail) tails.delete(sessionId) })
    return run
  }

  return {
    async prepare (sessionId) {
      await tails.get(sessionId)
      const creds = await pool.query<{ creds: string }>('SELECT creds FROM auth_creds WHERE session_id = $1', [sessionId])
      const keys = await pool.query<{ type: string, key_id: string, value: string }>('SELECT type, key_id, value FROM auth_keys WHERE session_id = $1', [sessionId])
      const l: Loaded = { generation: ++generations, creds: creds.rows[0]?.creds, keys: new Map() }
      for (const row of keys.rows) {
        let bucket = l.keys.get(row.type)
        if (bucket === undefined) { bucket = new Map(); l.keys.set(row.type, bucket) }
        bucket.set(row.key_id, row.value)
      }
      loaded.set(sessionId, l)
    },
    readCreds: (sessionId) => loaded.get(sessionId)?.creds,
    readKeys (sessionId, type, ids) {
      const found = new Map<string, string>()
      const bucket = loaded.get(sessionId)?.keys.get(type)
      if (bucket === undefined) return found
      for (const id of ids) {
        const value = bucket.get(id)
        if (value !== undefined) found.set(id, value)
      }
      return found
    },
    writeCreds (sessionId, text, at) {
      return whenCommitted(sessionId, queue(sessionId, 'could not store the auth creds', async (client) => {
        await client.query(
          `INSERT INTO auth_creds (session_id, creds, updated_at) VALUES ($1, $2, $3)
           ON CONFLICT (session_id) DO UPDATE SET creds = excluded.creds, updated_at = excluded.updated_at`, [sessionId, text, at])
      }), (l) => { l.creds = text })
    },
    writeKeys (sessionId, rows: KeyRow[]) {
      const apply = (l: Loaded): void => {
        for (const [type, id, value] of rows) {
          let bucket = l.keys.get(type)
          if (bucket === undefined) { bucket = new Map(); l.keys.set(type, bucket) }
          if (value === null) bucket.delete(id)
          else bucket.set(id, value)
        }
      }
      const puts = rows.filter((r): r is [string, string, string] => r[2] !== null)
      const deletes = rows.filter((r) => r[2] === null)
      return whenCommitted(sessionId, queue(sessionId, 'could not store auth keys', async (client) => {
        if (puts.length > 0) {
          // one statement for the batch (Baileys writes hundreds of pre-keys at once)
          await client.query(
            `INSERT INTO auth_keys (session_id, type, key_id, value)
             SELECT $1, t.type, t.key_id, t.value FROM unnest($2::text[], $3::text[], $4::text[]) AS t(type, key_id, value)
             ON CONFLICT (session_id, type, key_id) DO UPDATE SET value = excluded.value`,
            [sessionId, puts.map((r) => r[0]), puts.map((r) => r[1]), puts.map((r) => r[2])])
        }
        if (deletes.length > 0) {
          await client.query(
            'DELETE FROM auth_keys WHERE session_id = $1 AND (type, key_id) IN (SELECT * FROM unnest($2::text[], $3::text[]))',
            [sessionId, deletes.map((r) => r[0]), deletes.map((r) => r[1])])
        }
      }), apply)
    },
    pending: (sessionId) => tails.get(sessionId),
    flush: async () => { await Promise.all([...tails.values()]) },
    clear (sessionId) {
      loaded.set(sessionId, { generation: ++generations, creds: undefined, keys: new Map() })
      return queue(sessionId, 'could not delete the auth state', async (client) => {
        await client.query('DELETE FROM auth_keys WHERE session_id = $1', [sessionId])
        await client.query('DELETE FROM auth_creds WHERE session_id = $1', [sessionId])
      })
    }
  }
}

/** The dialect's auth backend. */
export function authBackendFor (handle: DbHandle, onError: (err: unknown, what: string) => void): AuthBackend {
  return handle.dialect === 'sqlite' ? sqliteAuthBackend(handle.sqlite) : pgAuthBackend(handle.pool, onError)
}
