import type SQLite from 'better-sqlite3'
import {
  BufferJSON,
  initAuthCreds,
  proto,
  type AuthenticationCreds,
  type AuthenticationState,
  type SignalDataSet,
  type SignalDataTypeMap,
  type SignalKeyStore
} from '@whiskeysockets/baileys'
import { lidReverseKey, LID_MAPPING_TYPE } from './baileys/index.js'

// Baileys' auth state (creds + Signal keys) kept in the database instead of useMultiFileAuthState files.
//
// SQLite (below): synchronous prepared statements. PostgreSQL (auth-state-pg.ts): a session's rows are
// loaded once before its socket starts (`prepare`), reads are served from them, and writes are queued
// per session and return promises Baileys awaits (keys.set) before it goes on.
//
// Every `keys.set` is one better-sqlite3 transaction and creds are written on every `creds.update`,
// so a crash at any point leaves rows that still log in. Reads go through a per-session cache that
// mirrors committed rows as their serialised text: it is filled on a read miss (negative entries too,
// Baileys asks for many keys that do not exist) and updated only after a commit, and every read
// returns a freshly parsed value, so a caller mutating what it got can never make the cache disagree
// with the database.

type KeyType = keyof SignalDataTypeMap

export interface SessionAuth {
  readonly sessionId: string
  /** the state to hand to the next socket; replaced by `reset()` */
  readonly state: AuthenticationState
  /** pair-success stored an account: the next socket logs in instead of registering */
  isLinked: () => boolean
  /** persists `creds` if they are still this session's current creds (a stale socket's are dropped) */
  saveCreds: (creds: AuthenticationCreds) => void | Promise<void>
  /** deletes every auth row and starts over with fresh creds (after logout) */
  reset: () => void | Promise<void>
  /** deletes every auth row; later writes from sockets still draining are ignored */
  dispose: () => void | Promise<void>
  /** forgets the state in memory, rows kept; later writes from sockets still draining are ignored */
  detach: () => void
  /**
   * The phone-number digits Baileys stored for a LID user (its `lid-mapping` keys), read synchronously
   * through the cache: receipts are resolved with it while their stanza is being committed.
   */
  numberForLid: (lidUser: string) => string | null
  /** see AuthBackend.pending: what the socket's next frame must wait for (PostgreSQL) */
  writesPending: () => Promise<boolean> | undefined
}

export interface AuthStore {
  /** loads what `open` needs (PostgreSQL: the session's rows); call before `open` */
  prepare: (sessionId: string) => Promise<void>
  /** the session's auth state; the same object while the process lives, so restarts keep the cache */
  open: (sessionId: string) => SessionAuth
  /** deletes a session's auth rows whether or not it is open */
  clear: (sessionId: string) => void | Promise<void>
  /**
   * Forgets the open state and its cache, keeping the rows (another node owns the session now and moves
   * them on); later writes from the socket still draining are ignored. The next open reads the rows again.
   */
  release: (sessionId: string) => void
  /** resolves when every write handed over so far has settled (before the database closes) */
  flush: () => Promise<void>
}

/** Where the rows live: synchronous (SQLite) or asynchronous writes with reads from loaded rows (PostgreSQL). */
export interface AuthBackend {
  prepare: (sessionId: string) => Promise<void>
  readCreds: (sessionId: string) => string | undefined
  readKeys: (sessionId: string, type: string, ids: string[]) => Map<string, string>
  writeCreds: (sessionId: string, text: string, at: number) => void | Promise<void>
  writeKeys: (sessionId: string, rows: KeyRow[]) => void | Promise<void>
  clear: (sessionId: string) => void | Promise<void>
  /**
   * The session's writes handed over so far and not yet settled: resolves true when they all committed,
   * false when one failed; undefined when none is pending (always, for synchronous writes).
   */
  pending: (sessionId: string) => Promise<boolean> | undefined
  flush: () => Promise<void>
}

interface Epoch {
  alive: boolean
  creds: AuthenticationCreds
  keys: SignalKeyStore
  /** the serialised value of one key, synchronously (null when absent) */
  readOne: (type: string, id: string) => string | null
  /** type → key id → serialised value, or null when the row is known not to exist */
  cache: Map<string, Map<string, string | null>>
}

export type KeyRow = [type: string, id: string, value: string | null]

export function sqliteAuthBackend (sqlite: SQLite.Database): AuthBackend {
  const getCreds = sqlite.prepare<[string], string>('SELECT creds FROM auth_creds WHERE session_id = ?').pluck()
  const putCreds = sqlite.prepare<[string, string, number]>(
    `INSERT INTO auth_creds (session_id, creds, updated_at) VALUES (?, ?, ?)
     ON CONFLICT (session_id) DO UPDATE SET creds = excluded.creds, updated_at = excluded.updated_at`)
  const getOneKey = sqlite.prepare<[string, string, string], string>(
    'SELECT value FROM auth_keys WHERE session_id = ? AND type = ? AND key_id = ?').pluck()
  const getManyKeys = sqlite.prepare<[string, string, string], { key_id: string, value: string }>(
    'SELECT key_id, value FROM auth_keys WHERE session_id = ? AND type = ? AND key_id IN (SELECT value FROM json_each(?))')
  const putKey = sqlite.prepare<[string, string, string, string]>(
    `INSERT INTO auth_keys (session_id, type, key_id, value) VALUES (?, ?, ?, ?)
     ON CONFLICT (session_id, type, key_id) DO UPDATE SET value = excluded.value`)
  const deleteKey = sqlite.prepare<[string, string, string]>('DELETE FROM auth_keys WHERE session_id = ? AND type = ? AND key_id = ?')
  const deleteKeys = sqlite.prepare<[string]>('DELETE FROM auth_keys WHERE session_id = ?')
  const deleteCreds = sqlite.prepare<[string]>('DELETE FROM auth_creds WHERE session_id = ?')

  const writeKeys = sqlite.transaction((sessionId: string, rows: KeyRow[]) => {
    for (const [type, id, value] of rows) {
      if (value === null) deleteKey.run(sessionId, type, id)
      else putKey.run(sessionId, type, id, value)
    }
  })
  const clearRows = sqlite.transaction((sessionId: string) => {
    deleteKeys.run(sessionId)
    deleteCreds.run(sessionId)
  })

  function readKeys (sessionId: string, type: string, ids: string[]): Map<string, string> {
    const found = new Map<string, string>()
    if (ids.length === 1) {
      const value = getOneKey.get(sessionId, type, ids[0])
      if (value !== undefined) found.set(ids[0], value)
      return found
    }
    for (const row of getManyKeys.all(sessionId, type, JSON.stringify(ids))) found.set(row.key_id, row.value)
    return found
  }

  return {
    prepare: async () => {},
    readCreds: (sessionId) => getCreds.get(sessionId),
    readKeys,
    writeCreds: (sessionId, text, at) => { putCreds.run(sessionId, text, at) },
    writeKeys: (sessionId, rows) => { writeKeys(sessionId, rows) },
    clear: (sessionId) => { clearRows(sessionId) },
    pending: () => undefined,
    flush: async () => {}
  }
}

export function createAuthStore (backend: AuthBackend): AuthStore {
  const { readKeys } = backend
  const open = new Map<string, SessionAuth>()

  function makeEpoch (sessionId: string, creds: AuthenticationCreds): Epoch {
    const cache = new Map<string, Map<string, string | null>>()
    const bucket = (type: string): Map<string, string | null> => {
      let b = cache.get(type)
      if (b === undefined) { b = new Map(); cache.set(type, b) }
      return b
    }
    const epoch: Epoch = {
      alive: true,
      creds,
      cache,
      readOne: (type, id) => {
        const b = bucket(type)
        const text = b.get(id)
        if (text !== undefined || !epoch.alive) return text ?? null
        const found = readKeys(sessionId, type, [id]).get(id) ?? null
        b.set(id, found)
        return found
      },
      keys: {
        get: <T extends KeyType>(type: T, ids: string[]) => {
          const out: Record<string, SignalDataTypeMap[T]> = {}
          const b = bucket(type)
          const missing: string[] = []
          for (const id of ids) {
            const text = b.get(id)
            if (text === undefined) missing.push(id)
            else if (text !== null) out[id] = parseKey(type, text)
          }
          if (missing.length > 0 && epoch.alive) {
            const found = readKeys(sessionId, type, missing)
            for (const id of missing) {
              const text = found.get(id) ?? null
              b.set(id, text)
              if (text !== null) out[id] = parseKey(type, text)
            }
          }
          return out
        },
        set: (data: SignalDataSet) => {
          if (!epoch.alive) return
          const rows: KeyRow[] = []
          for (const type of Object.keys(data) as KeyType[]) {
            const entries = data[type]
            if (entries === undefined) continue
            for (const [id, value] of Object.entries(entries)) {
              rows.push([type, id, value === null || value === undefined ? null : stringifyKey(type, value)])
            }
          }
          if (rows.length === 0) return
          const written = backend.writeKeys(sessionId, rows)
          // the cache follows committed rows only: at once when the write is synchronous (SQLite), once
          // the commit resolves when it is not (PostgreSQL; Baileys awaits it); a failed write changes nothing
          const cache = (): void => { if (epoch.alive) for (const [type, id, text] of rows) bucket(type).set(id, text) }
          if (written instanceof Promise) return written.then(cache)
          cache()
        }
      }
    }
    return epoch
  }

  function loadCreds (sessionId: string): AuthenticationCreds {
    const text = backend.readCreds(sessionId)
    return text === undefined ? initAuthCreds() : JSON.parse(text, BufferJSON.reviver) as AuthenticationCreds
  }

  return {
    prepare: async (sessionId) => { if (!open.has(sessionId)) await backend.prepare(sessionId) },
    flush: backend.flush,
    open (sessionId) {
      const existing = open.get(sessionId)
      if (existing !== undefined) return existing
      let epoch = makeEpoch(sessionId, loadCreds(sessionId))
      const auth: SessionAuth = {
        sessionId,
        get state () { return { creds: epoch.creds, keys: epoch.keys } },
        isLinked: () => epoch.creds.me?.id !== undefined && epoch.creds.account !== undefined && epoch.creds.account !== null,
        saveCreds (creds) {
          if (!epoch.alive || creds !== epoch.creds) return
          return backend.writeCreds(sessionId, JSON.stringify(creds, BufferJSON.replacer), Date.now())
        },
        reset () {
          epoch.alive = false
          const cleared = backend.clear(sessionId)
          epoch = makeEpoch(sessionId, initAuthCreds())
          return cleared
        },
        dispose () {
          epoch.alive = false
          epoch.cache.clear()
          open.delete(sessionId)
          return backend.clear(sessionId)
        },
        detach () {
          epoch.alive = false
          epoch.cache.clear()
          if (open.get(sessionId) === auth) open.delete(sessionId)
        },
        writesPending: () => backend.pending(sessionId),
        numberForLid (lidUser) {
          const text = epoch.readOne(LID_MAPPING_TYPE, lidReverseKey(lidUser))
          if (text === null) return null
          const value: unknown = JSON.parse(text)
          return typeof value === 'string' && /^\d+$/.test(value) ? value : null
        }
      }
      open.set(sessionId, auth)
      return auth
    },
    clear (sessionId) {
      const auth = open.get(sessionId)
      return auth !== undefined ? auth.dispose() : backend.clear(sessionId)
    },
    release (sessionId) {
      open.get(sessionId)?.detach()
    }
  }
}

// Signal sessions are the keys a status send reads and writes once per recipient device and chunk
// (issue 14). libsignal's SessionRecord.serialize() gives plain JSON (base64 strings, numbers, booleans,
// no Buffer and no object whose keys and values are all numbers), so BufferJSON's replacer and reviver,
// called back for every property, change nothing in it: a session is written and read as plain JSON
// unless it holds a Buffer after all (then the replacer and reviver run, as for every other type).
const PLAIN_JSON_TYPES: ReadonlySet<string> = new Set(['session'])

function stringifyKey (type: string, value: unknown): string {
  if (PLAIN_JSON_TYPES.has(type) && !(value instanceof Uint8Array)) {
    const text = JSON.stringify(value)
    if (!text.includes('"Buffer"')) return text
  }
  return JSON.stringify(value, BufferJSON.replacer)
}

function parseKey<T extends KeyType> (type: T, text: string): SignalDataTypeMap[T] {
  const plain = PLAIN_JSON_TYPES.has(type) && !text.includes('"Buffer"')
  const value: unknown = plain ? JSON.parse(text) : JSON.parse(text, BufferJSON.reviver)
  if (type === 'app-state-sync-key') {
    return proto.Message.AppStateSyncKeyData.fromObject(value as Record<string, unknown>) as unknown as SignalDataTypeMap[T]
  }
  return value as SignalDataTypeMap[T]
}
