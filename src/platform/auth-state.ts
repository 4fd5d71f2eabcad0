import {
  BufferJSON,
  initAuthCreds,
  proto,
  type AuthenticationCreds,
  type SignalDataSet,
  type SignalDataTypeMap,
  type SignalKeyStore
} from '@whiskeysockets/baileys'
import type { AuthStateStore, KeyWrite } from '../db/stores/auth-state.js'
import type { AuthStore, SessionAuth } from './auth-types.js'
import { lidReverseKey, LID_MAPPING_TYPE } from './baileys/index.js'

export type { AuthStore, SessionAuth } from './auth-types.js'

// Baileys' auth state (creds + Signal keys) kept in the database (the AuthStateStore port,
// src/db/stores/auth-state.ts) instead of useMultiFileAuthState files.
//
// Baileys reads keys synchronously in places (numberForLid while a receipt stanza is being committed), so
// a session's rows are loaded in one read before its socket starts (`prepare`) and reads are answered from
// them; this node owns the session, so nobody else writes them. They are kept as their serialised text
// and every read returns a freshly parsed value, so a caller mutating what it got can never make them
// disagree with the database. Writes go out in order, one queue per session, each one transaction:
// keys.set returns the commit's promise (Baileys awaits it, in addTransactionCapability's commit, before
// acting on what the keys protect), creds writes are queued the same way. The loaded rows follow commits
// (a failed write changes nothing); clearing starts a new generation, so a write of the old one that
// commits afterwards cannot bring its rows back. A write that fails is reported through `onError` (and
// rejects the promise Baileys awaits). `writesPending` tells the send gate (send-gate.ts) what a
// session's next frame must wait for, since Baileys does not await creds writes. Baileys changes the creds
// in memory before they are written (pair-success puts the account in them): after a write failed, the
// state in memory is ahead of the database, so the next socket starts from the committed rows (`recover`).
//
// Pre-keys are the exception (ON_DEMAND): Baileys uploads 812 at link time and reads one only when a contact
// opens a Signal session with this device (a pkmsg) or when it uploads more; held in memory they were 146 KB of
// every idle session's ~380 KB of heap (issue 33's audit, bench/NOTES.md). They are read from the database when
// asked for, after the session's writes handed over so far have settled, so a read sees every earlier write.

type KeyType = keyof SignalDataTypeMap

/** key types not held in memory: read from the database when Baileys asks (see above) */
const ON_DEMAND: readonly string[] = ['pre-key']

/** A session's rows in memory: type → key id → serialised value. */
interface Loaded {
  generation: number
  creds: string | undefined
  keys: Map<string, Map<string, string>>
}

interface Epoch {
  alive: boolean
  creds: AuthenticationCreds
  keys: SignalKeyStore
}

export function createAuthStore (store: AuthStateStore, onError: (err: unknown, what: string) => void): AuthStore {
  const open = new Map<string, SessionAuth>()
  const loaded = new Map<string, Loaded>()
  /** per session with writes not yet settled: resolves once they have, true when every one committed */
  const tails = new Map<string, Promise<boolean>>()
  /** sessions a write of creds or keys of which failed since their rows were loaded: memory is ahead of the database */
  const failed = new Set<string>()
  let generations = 0

  const entry = (sessionId: string): Loaded => {
    let l = loaded.get(sessionId)
    if (l === undefined) { l = { generation: ++generations, creds: undefined, keys: new Map() }; loaded.set(sessionId, l) }
    return l
  }
  const bucket = (l: Loaded, type: string): Map<string, string> => {
    let b = l.keys.get(type)
    if (b === undefined) { b = new Map(); l.keys.set(type, b) }
    return b
  }
  const readOne = (sessionId: string, type: string, id: string): string | null => loaded.get(sessionId)?.keys.get(type)?.get(id) ?? null

  /** runs `write` after the session's earlier writes; the returned promise rejects when it fails */
  function queue (sessionId: string, what: string, write: () => Promise<void>): Promise<void> {
    const previous = tails.get(sessionId) ?? Promise.resolve(true)
    const run = previous.then(write)
    void run.catch((err: unknown) => { onError(err, what) })
    const tail = previous.then(async (ok) => await run.then(() => ok, () => false))
    tails.set(sessionId, tail)
    void tail.then(() => { if (tails.get(sessionId) === tail) tails.delete(sessionId) })
    return run
  }

  /** queues a write and applies it to the loaded rows once committed, unless they were cleared since */
  function written (sessionId: string, what: string, write: () => Promise<void>, apply: (l: Loaded) => void): Promise<void> {
    const generation = entry(sessionId).generation
    const applied = queue(sessionId, what, write).then(() => {
      const l = loaded.get(sessionId)
      if (l !== undefined && l.generation === generation) apply(l)
    }, (err: unknown) => {
      if (loaded.get(sessionId)?.generation === generation) failed.add(sessionId)
      throw err
    })
    // callers that do not await (creds.update) must not leave a rejection unhandled: onError reported it
    applied.catch(() => {})
    return applied
  }

  function clearRows (sessionId: string): Promise<void> {
    loaded.set(sessionId, { generation: ++generations, creds: undefined, keys: new Map() })
    return queue(sessionId, 'could not delete the auth state', async () => { await store.clear(sessionId) })
  }

  function makeEpoch (sessionId: string, creds: AuthenticationCreds): Epoch {
    const epoch: Epoch = {
      alive: true,
      creds,
      keys: {
        get: <T extends KeyType>(type: T, ids: string[]) => {
          const out: Record<string, SignalDataTypeMap[T]> = {}
          if (!epoch.alive) return out
          if (ON_DEMAND.includes(type)) return readOnDemand(sessionId, epoch, type, ids)
          const b = loaded.get(sessionId)?.keys.get(type)
          if (b === undefined) return out
          for (const id of ids) {
            const text = b.get(id)
            if (text !== undefined) out[id] = parseKey(type, text)
          }
          return out
        },
        set: async (data: SignalDataSet) => {
          if (!epoch.alive) return
          const rows: KeyWrite[] = []
          for (const type of Object.keys(data) as KeyType[]) {
            const entries = data[type]
            if (entries === undefined) continue
            for (const [id, value] of Object.entries(entries)) {
              rows.push([type, id, value === null || value === undefined ? null : stringifyKey(type, value)])
            }
          }
          if (rows.length === 0) return
          await written(sessionId, 'could not store auth keys', async () => { await store.writeKeys(sessionId, rows) }, (l) => {
            for (const [type, id, text] of rows) {
              if (ON_DEMAND.includes(type)) continue
              if (text === null) l.keys.get(type)?.delete(id)
              else bucket(l, type).set(id, text)
            }
          })
        }
      }
    }
    return epoch
  }

  async function readOnDemand<T extends KeyType> (sessionId: string, epoch: Epoch, type: T, ids: string[]): Promise<Record<string, SignalDataTypeMap[T]>> {
    const out: Record<string, SignalDataTypeMap[T]> = {}
    // every write handed over before this read is in the database (or failed)
    await tails.get(sessionId)
    if (!epoch.alive || ids.length === 0) return out
    for (const [id, text] of await store.readKeys(sessionId, type, ids)) out[id] = parseKey(type, text)
    return out
  }

  function loadCreds (sessionId: string): AuthenticationCreds {
    const text = loaded.get(sessionId)?.creds
    return text === undefined ? initAuthCreds() : JSON.parse(text, BufferJSON.reviver) as AuthenticationCreds
  }

  return {
    async prepare (sessionId) {
      if (open.has(sessionId)) return
      await tails.get(sessionId)
      const rows = await store.load(sessionId, ON_DEMAND)
      const l: Loaded = { generation: ++generations, creds: rows.creds, keys: new Map() }
      for (const [type, id, value] of rows.keys) bucket(l, type).set(id, value)
      loaded.set(sessionId, l)
      failed.delete(sessionId)
    },
    flush: async () => { await Promise.all([...tails.values()]) },
    open (sessionId) {
      const existing = open.get(sessionId)
      if (existing !== undefined) return existing
      let epoch = makeEpoch(sessionId, loadCreds(sessionId))
      const auth: SessionAuth = {
        sessionId,
        get state () { return { creds: epoch.creds, keys: epoch.keys } },
        isLinked: () => epoch.creds.me?.id !== undefined && epoch.creds.account !== undefined && epoch.creds.account !== null,
        // not awaited by Baileys (creds.update): the promise it gets never rejects unhandled (onError reports a failure)
        saveCreds (creds) {
          if (!epoch.alive || creds !== epoch.creds) return Promise.resolve()
          const text = JSON.stringify(creds, BufferJSON.replacer)
          return written(sessionId, 'could not store the auth creds', async () => { await store.writeCreds(sessionId, text, Date.now()) }, (l) => { l.creds = text })
        },
        async reset () {
          epoch.alive = false
          failed.delete(sessionId)
          const cleared = clearRows(sessionId)
          epoch = makeEpoch(sessionId, initAuthCreds())
          await cleared
        },
        async dispose () {
          epoch.alive = false
          failed.delete(sessionId)
          open.delete(sessionId)
          const cleared = clearRows(sessionId)
          loaded.delete(sessionId)
          await cleared
        },
        detach () {
          epoch.alive = false
          if (open.get(sessionId) === auth) { open.delete(sessionId); loaded.delete(sessionId); failed.delete(sessionId) }
        },
        writesPending: () => tails.get(sessionId),
        async recover () {
          if (!failed.has(sessionId) || !epoch.alive) return false
          // the old socket's late writes are dropped from here on; the loaded rows follow commits only
          epoch.alive = false
          failed.delete(sessionId)
          await tails.get(sessionId)
          epoch = makeEpoch(sessionId, loadCreds(sessionId))
          return true
        },
        numberForLid (lidUser) {
          if (!epoch.alive) return null
          const text = readOne(sessionId, LID_MAPPING_TYPE, lidReverseKey(lidUser))
          if (text === null) return null
          const value: unknown = JSON.parse(text)
          return typeof value === 'string' && /^\d+$/.test(value) ? value : null
        }
      }
      open.set(sessionId, auth)
      return auth
    },
    async clear (sessionId) {
      const auth = open.get(sessionId)
      if (auth !== undefined) await auth.dispose()
      else await clearRows(sessionId)
      loaded.delete(sessionId)
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
