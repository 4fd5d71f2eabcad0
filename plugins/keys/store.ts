import { hash, randomBytes, timingSafeEqual } from 'node:crypto'
import type { FastifyBaseLogger } from 'fastify'
import type { ApiKey } from '../../src/db/stores/keys.js'
import type { KeysStore } from '../../src/db/stores/keys.js'
import { SCOPES, type CreateKeyBody, type KeyView, type Scope } from '../../schemas/keys.js'
import { UploadNotFound } from '../../src/errors.js'

/** Who a request or a socket speaks for: the admin key (API_KEY), or a scoped key. */
export interface Principal {
  admin: boolean
  /** null for the admin key */
  id: string | null
  name: string | null
  /** '*': every session */
  sessions: '*' | ReadonlySet<string>
  scopes: ReadonlySet<Scope>
}

export const ADMIN: Principal = Object.freeze({ admin: true, id: null, name: null, sessions: '*', scopes: new Set(SCOPES) })

/** `stk_<16 hex id>_<43 base64url secret>` */
const KEY_FORMAT = /^stk_([0-9a-f]{16})_([A-Za-z0-9_-]{43})$/
/** compared against when the id is unknown, so a miss costs what a hit costs */
const DUMMY = digest('no such key')

function digest (value: string): Buffer {
  return hash('sha256', value, 'buffer')
}

export function canSee (p: Principal, sessionId: string): boolean {
  return p.sessions === '*' || p.sessions.has(sessionId)
}

export function hasScope (p: Principal, scope: Scope): boolean {
  return p.admin || p.scopes.has(scope)
}

function principalOf (row: ApiKey): Principal {
  return {
    admin: false,
    id: row.id,
    name: row.name,
    sessions: row.sessions === '*' ? '*' : new Set(JSON.parse(row.sessions) as string[]),
    scopes: new Set(JSON.parse(row.scopes) as Scope[])
  }
}

function viewOf (row: ApiKey): KeyView {
  return {
    id: row.id,
    name: row.name,
    sessions: row.sessions === '*' ? '*' : JSON.parse(row.sessions) as string[],
    scopes: JSON.parse(row.scopes) as string[],
    createdAt: new Date(row.createdAt).toISOString()
  }
}

export interface KeyListeners {
  /** a key was revoked (here, or seen gone on another node): its sockets go */
  revoked: (keyId: string) => void
  /** a session was created; `keyId` is the scoped key that created it (its list now holds it), null: the admin key */
  sessionCreated: (sessionId: string, keyId: string | null) => void
}

/** How often the keys are read again (another node of a cluster may have created or revoked one). */
const RELOAD_MS = 5000

/**
 * The admin key and the scoped keys. Look-ups compare hashes in constant time. Each look-up of a scoped key
 * reads the key's row (a key revoked on another node is refused at once); the copy in memory, read again
 * every few seconds, serves the socket.io rooms and the webhook filter.
 */
export function createKeyStore (deps: { store: KeysStore, adminKey: string, log: FastifyBaseLogger }) {
  const { store, log } = deps
  const adminHash = digest(deps.adminKey)
  const isAdminKey = (candidate: string): boolean => timingSafeEqual(digest(candidate), adminHash)
  const cache = new Map<string, { hash: Buffer, principal: Principal }>()
  const listeners: { [K in keyof KeyListeners]: Array<KeyListeners[K]> } = { revoked: [], sessionCreated: [] }
  let timer: NodeJS.Timeout | null = null

  function put (row: ApiKey): Principal {
    const principal = principalOf(row)
    cache.set(row.id, { hash: Buffer.from(row.secretHash, 'hex'), principal })
    return principal
  }

  function fireRevoked (id: string): void {
    for (const l of listeners.revoked) {
      try { l(id) } catch (err) { log.error({ err }, 'key listener threw') }
    }
  }

  async function load (): Promise<void> {
    const rows = await store.list()
    const seen = new Set(rows.map((r) => r.id))
    for (const row of rows) put(row)
    for (const id of [...cache.keys()]) {
      if (!seen.has(id)) { cache.delete(id); fireRevoked(id) }
    }
  }

  function match (stored: Buffer | undefined, secret: string): boolean {
    const ok = timingSafeEqual(digest(secret), stored ?? DUMMY)
    return ok && stored !== undefined
  }

  /** The key's principal, or null when it is no key of this service. */
  async function resolve (candidate: string): Promise<Principal | null> {
    if (isAdminKey(candidate)) return ADMIN
    const m = KEY_FORMAT.exec(candidate)
    if (m === null) return null
    const [, id, secret] = m
    const row = await store.find(id)
    if (row === undefined) {
      match(undefined, secret)
      if (cache.delete(id)) fireRevoked(id)
      return null
    }
    return match(Buffer.from(row.secretHash, 'hex'), secret) ? put(row) : null
  }

  /** A scoped key's principal by its id (a grant another node of the cluster forwarded), or null when it is gone. */
  async function principalById (id: string): Promise<Principal | null> {
    const row = await store.find(id)
    if (row !== undefined) return put(row)
    if (cache.delete(id)) fireRevoked(id)
    return null
  }

  async function create (body: CreateKeyBody): Promise<KeyView & { key: string }> {
    const id = randomBytes(8).toString('hex')
    const secret = randomBytes(32).toString('base64url')
    const row: ApiKey = {
      id,
      name: body.name.trim(),
      secretHash: digest(secret).toString('hex'),
      sessions: body.sessions === '*' ? '*' : JSON.stringify(body.sessions),
      scopes: JSON.stringify(SCOPES.filter((s) => body.scopes.includes(s))),
      createdAt: Date.now()
    }
    await store.insert(row)
    put(row)
    return { ...viewOf(row), key: `stk_${id}_${secret}` }
  }

  async function revoke (id: string): Promise<boolean> {
    const removed = await store.remove(id)
    cache.delete(id)
    if (removed) fireRevoked(id)
    return removed
  }

  return {
    resolve,
    principalById,
    create,
    revoke,
    list: async (): Promise<KeyView[]> => (await store.list()).map(viewOf),
    /** the key's principal as this node last knew it; undefined once revoked */
    current (p: Principal): Principal | undefined {
      return p.id === null ? ADMIN : cache.get(p.id)?.principal
    },
    /** for the webhook filter: a webhook made with key `keyId` receives this session's events */
    keySees (keyId: string, sessionId: string): boolean {
      const entry = cache.get(keyId)
      return entry !== undefined && canSee(entry.principal, sessionId)
    },
    /** a key with a list of sessions that created one gets it on its list, before anyone hears of the session */
    async sessionCreated (sessionId: string, creator: Principal | null): Promise<void> {
      const keyId = creator?.id ?? null
      if (keyId !== null && creator?.sessions !== '*') {
        const row = await store.addSession(keyId, sessionId)
        if (row !== undefined) put(row)
      }
      for (const l of listeners.sessionCreated) {
        try { l(sessionId, keyId) } catch (err) { log.error({ err }, 'key listener threw') }
      }
    },
    /** a deleted session leaves every list: a later session with the same id belongs to whoever creates it */
    async sessionDeleted (sessionId: string): Promise<void> {
      await store.removeSession(sessionId)
      for (const [id, entry] of cache) {
        const s = entry.principal.sessions
        if (s !== '*' && s.has(sessionId)) {
          cache.set(id, { ...entry, principal: { ...entry.principal, sessions: new Set([...s].filter((x) => x !== sessionId)) } })
        }
      }
    },
    /** an upload made with a scoped key is that key's */
    async uploaded (filename: string, by: Principal | null): Promise<void> {
      if (by?.id !== null && by?.id !== undefined) await store.setUploadOwner(filename, by.id)
    },
    /** a scoped key posts only its own uploads (another key's answers as unknown); the admin key any */
    async checkUpload (by: Principal | null, body: { type: string, content: string }): Promise<void> {
      if (by === null || by.admin || (body.type !== 'image' && body.type !== 'video')) return
      const owner = await store.uploadOwner(body.content)
      if (owner !== by.id) throw new UploadNotFound()
    },
    on<K extends keyof KeyListeners> (event: K, listener: KeyListeners[K]): void {
      (listeners[event] as Array<KeyListeners[K]>).push(listener)
    },
    async start (): Promise<void> {
      await load()
      timer = setInterval(() => { load().catch((err: unknown) => { log.warn({ err }, 'reading API keys failed') }) }, RELOAD_MS)
      timer.unref()
    },
    stop (): void {
      if (timer !== null) { clearInterval(timer); timer = null }
    }
  }
}

export type KeyStore = ReturnType<typeof createKeyStore>
