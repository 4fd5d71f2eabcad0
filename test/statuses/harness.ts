import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { TestContext } from 'node:test'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../../src/app.js'
import { DOMAIN_EVENT_NAMES } from '../../plugins/domain-events/index.js'
import { NotConnected } from '../../src/errors.js'
import type { Platform } from '../../src/platform/platform.js'
import type { PlatformEventMap, SendStatusInput, SendStatusResult, SessionSnapshot } from '../../src/platform/types.js'
import type { EventName, EventPayloads } from '../../schemas/events.js'
import { EventRecorder, type RecordedEvent } from '../events.js'
import { testConfig } from '../helper.js'
import { seedMigratedSqlite } from '../support/db-matrix.js'
import { insertSession } from '../support/sessions.js'
import { dbOf } from '../support/db.js'

// The whole app (buildApp) with the platform replaced by a fake and every domain event recorded: fast,
// deterministic tests of the status service over the real database, media store and domain events, for
// everything the emulator is not needed for.

export const OWN = '15550000001'

export type Emitted = RecordedEvent<EventPayloads>

/** Stands in for `app.platform`: the methods and events the status service uses. */
export class FakePlatform {
  connected = new Map<string, string>()
  sent: Array<{ sessionId: string, input: SendStatusInput }> = []
  revoked: Array<{ sessionId: string, messageId: string, recipientJids: string[] }> = []
  /** makes the next sendStatus fail with this error, once */
  failNext: Error | null = null
  /** when set, sendStatus waits for it before answering */
  gate: Promise<void> | null = null
  /** recipients per chunk (each chunk goes through onChunk) */
  chunkSize = 2
  /** makes the next sendStatus fail with `error` once `chunks` chunks went out (`written`: the next one went out unacknowledged) */
  failAfter: { chunks: number, error: Error, written?: boolean } | null = null
  /** called before each chunk goes out (a test looks at what is committed by then) */
  beforeChunk: ((index: number) => void) | null = null
  private counter = 0
  private listeners = new Map<string, Set<(p: never) => void>>()

  /** sessions the fake reports as logged out (when not connected) */
  loggedOut = new Set<string>()

  /** a connected session of the fake; none is between two sockets (test/statuses/durability-e2e.test.ts sends during a real reconnect) */
  reachable (sessionId: string): boolean {
    return this.snapshot(sessionId)?.connected === true
  }

  snapshot (sessionId: string): SessionSnapshot | null {
    const own = this.connected.get(sessionId)
    if (own === undefined) {
      return this.loggedOut.has(sessionId) ? { sessionId, connected: false, status: 'logged-out', ownNumber: null, pairingCode: null, qrCode: null } : null
    }
    return { sessionId, connected: true, status: 'open', ownNumber: own, pairingCode: null, qrCode: null }
  }

  /** the session supervisor opens the stored sessions at start: the fake opens nothing (a test connects them) */
  async startSession (): Promise<void> {}
  async settled (): Promise<void> {}
  async preload (): Promise<void> {}

  newMessageId (): string {
    return `3EB0${(++this.counter).toString(16).padStart(16, '0').toUpperCase()}`
  }

  async sendStatus (sessionId: string, input: SendStatusInput): Promise<SendStatusResult> {
    this.sent.push({ sessionId, input })
    if (this.gate !== null) await this.gate
    const own = this.connected.get(sessionId)
    if (own === undefined) throw new NotConnected()
    if (this.failNext !== null) { const err = this.failNext; this.failNext = null; throw err }
    const all = [own, ...input.recipients].map((n) => `${n}@s.whatsapp.net`)
    const done = new Set(input.done ?? [])
    const todo = all.filter((jid) => !done.has(jid))
    if (input.prepared === undefined) await input.onPrepared?.(Buffer.from(JSON.stringify(input.content)))
    let sent = all.length - todo.length
    for (let i = 0; i * this.chunkSize < todo.length; i++) {
      const jids = todo.slice(i * this.chunkSize, (i + 1) * this.chunkSize)
      this.beforeChunk?.(i)
      await input.onChunkStart?.(jids)
      if (this.failAfter !== null && this.failAfter.chunks === i) {
        const { error, written } = this.failAfter
        this.failAfter = null
        if (written === true) await input.onUnconfirmed?.(jids)
        throw error
      }
      sent += jids.length
      await input.onChunk?.(jids, all.length > this.chunkSize ? { sent, total: all.length } : null)
    }
    return { messageId: input.messageId, recipientJids: all }
  }

  async revokeStatus (sessionId: string, messageId: string, recipientJids: string[]): Promise<boolean> {
    this.revoked.push({ sessionId, messageId, recipientJids })
    return true
  }

  on<K extends keyof PlatformEventMap> (event: K, listener: (payload: PlatformEventMap[K]) => void): this {
    let set = this.listeners.get(event)
    if (set === undefined) this.listeners.set(event, set = new Set())
    set.add(listener as (p: never) => void)
    return this
  }

  off<K extends keyof PlatformEventMap> (event: K, listener: (payload: PlatformEventMap[K]) => void): this {
    this.listeners.get(event)?.delete(listener as (p: never) => void)
    return this
  }

  emit<K extends keyof PlatformEventMap> (event: K, payload: PlatformEventMap[K]): void {
    for (const l of this.listeners.get(event) ?? []) (l as (p: PlatformEventMap[K]) => void)(payload)
  }

  /** what the rest of the app asks of a platform it does not use here */
  compatibility (): null { return null }
  clientExpiration (): null { return null }
  async close (): Promise<void> {}
}

export interface Harness {
  app: FastifyInstance
  platform: FakePlatform
  events: Emitted[]
  uploadDir: string
  dbFile: string
  /** events of one name, payloads only */
  of: <K extends EventName>(event: K) => Array<EventPayloads[K]>
  addSession: (sessionId: string, opts?: { connected?: boolean, own?: string }) => Promise<void>
  /** writes a file under a stored upload name and its uploads row; createdAt defaults to now */
  addUpload: (name: string, kind: 'image' | 'video', createdAt?: number) => Promise<string>
}

export async function harness (t: TestContext, env: Record<string, string> = {}): Promise<Harness> {
  const { config, dir } = testConfig(env)
  if (config.databaseUrl === null) await seedMigratedSqlite(config.databaseFile)
  const platform = new FakePlatform()
  const recorder = new EventRecorder<EventPayloads>()
  const events = recorder.seen
  const app = await buildApp(config, {}, { platform: platform as unknown as Platform })
  for (const event of DOMAIN_EVENT_NAMES) app.domainEvents.on(event, (payload) => { recorder.record(event, payload) })
  t.after(async () => {
    await app.close()
    rmSync(dir, { recursive: true, force: true })
  })
  await app.ready()

  let uploadCounter = 0
  return {
    app,
    platform,
    events,
    uploadDir: config.uploadDir,
    dbFile: config.databaseFile,
    of: <K extends EventName>(event: K) => recorder.all(event),
    async addSession (sessionId, o = {}) {
      const own = o.own ?? OWN
      await insertSession(app, sessionId, { ownNumber: own, linked: true })
      if (o.connected !== false) platform.connected.set(sessionId, own)
    },
    async addUpload (name, kind, createdAt = Date.now()) {
      const filename = `${createdAt}-${(++uploadCounter).toString(16).padStart(12, '0')}-${name}`
      writeFileSync(join(config.uploadDir, filename), 'x')
      await dbOf(app).db.insertInto('uploads').values({ filename, kind, mime_type: kind === 'image' ? 'image/jpeg' : 'video/mp4', size: 1, created_at: createdAt }).execute()
      return filename
    }
  }
}
