import { mkdtempSync, rmSync } from 'node:fs'
import { storesOf } from '../../src/db/stores/index.js'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { Writable } from 'node:stream'
import { pino } from 'pino'
import { openDatabase, type SqliteHandle as DbHandle } from '../../src/db/connection.js'
import { authStateStore } from '../../src/db/stores/auth-state.js'
import type { SessionStore } from '../../src/db/stores/sessions.js'
import { createPlatform, type Platform, type PlatformOptions, type PlatformTiming } from '../../src/platform/platform.js'
import type { ConnectionStatusChange, PlatformEventMap, ReceiptSink, SessionLinks, StatusView } from '../../src/platform/types.js'
import { EventRecorder } from '../events.js'
import type { Config } from '../../src/config.js'
import { parseSpeedTricksOff } from '../../src/speed-tricks.js'
import { testCertPaths, type Emulator } from '@status-tracker/emulator'

// Real Baileys through the platform, against the emulator on 127.0.0.1, over an on-disk SQLite file.

export type EventName = keyof PlatformEventMap & string

/** Every platform event, in order. */
export class EventLog extends EventRecorder<PlatformEventMap> {
  constructor (platform: Platform) {
    super()
    const names: EventName[] = ['connection-status', 'pairing-code', 'pairing-code-error', 'qr-code', 'qr-code-error', 'status-receipts', 'status-error']
    for (const event of names) platform.on(event, (payload: unknown) => { this.record(event, payload) })
  }

  async next<K extends EventName>(event: K, where: (p: PlatformEventMap[K]) => boolean, since: number, timeoutMs = 15_000): Promise<PlatformEventMap[K]> {
    return await this.first(event, where, since, timeoutMs)
  }
}

/** Log lines the platform wrote (JSON), to check what it warned about. */
export class LogSink {
  readonly lines: Array<Record<string, unknown>> = []
  readonly stream = new Writable({
    write: (chunk: Buffer, _enc, cb) => {
      for (const line of chunk.toString().split('\n')) if (line.trim() !== '') this.lines.push(JSON.parse(line) as Record<string, unknown>)
      cb()
    }
  })

  messages (level: number, since = 0): string[] {
    return this.lines.slice(since).filter((l) => l.level === level).map((l) => String(l.msg))
  }
}

export interface TempDb { db: DbHandle, dir: string, close: () => Promise<void> }

export async function tempDb (): Promise<TempDb> {
  const dir = mkdtempSync(join(tmpdir(), 'st-platform-'))
  const db = await openDatabase(join(dir, 'platform.db'))
  return { db, dir, close: async () => { await db.close(); rmSync(dir, { recursive: true, force: true }) } }
}

export function sessionRow (db: DbHandle, id: string): { linked: number, own_number: string | null, own_lid: string | null } | undefined {
  return db.sqlite.prepare<[string], { linked: number, own_number: string | null, own_lid: string | null }>(
    'SELECT linked, own_number, own_lid FROM sessions WHERE id = ?').get(id)
}

export function authRows (db: DbHandle, id: string): { creds: number, keys: number } {
  const count = (sql: string): number => db.sqlite.prepare<[string], number>(sql).pluck().get(id) ?? 0
  return {
    creds: count('SELECT count(*) FROM auth_creds WHERE session_id = ?'),
    keys: count('SELECT count(*) FROM auth_keys WHERE session_id = ?')
  }
}

export const FAST_TIMING: Partial<PlatformTiming> = {
  reconnectBaseMs: 300,
  reconnectMaxMs: 2000,
  pairingReadyTimeoutMs: 10_000,
  sendOpenWaitMs: 10_000,
  sendRetryBaseMs: 200,
  sendRetryMaxMs: 1000,
  logoutTimeoutMs: 5000,
  socketEndTimeoutMs: 2000,
  lidLookupIntervalMs: 300
}

export function waConfig (emu: Emulator, overrides: Partial<Config['wa']> = {}): Config['wa'] {
  return { websocketUrl: emu.wsUrl, version: null, testTrustRoot: emu.rootPublicKey, linkTimeoutMs: 60_000, statusChunkSize: 256, ...overrides }
}

/** A receipt sink that keeps what it is given; `failNext` makes the next commits throw. */
export class RecordingSink implements ReceiptSink {
  /** delivery receipts are only counted: Baileys handles a stanza of deliveries alone as it came */
  readonly takesDeliveries = false
  readonly commits: Array<{ sessionId: string, views: StatusView[], at: number }> = []
  readonly mapped: Array<{ sessionId: string, lid: string, number: string }> = []
  /** what unmappedLids answers, per session */
  readonly unmapped = new Map<string, string[]>()
  failNext = 0
  /** while set, commits are recorded but answer this promise: the stanzas' acks wait for it */
  holdWith: Promise<void> | null = null

  async commit (sessionId: string, views: StatusView[]): Promise<void> {
    if (this.failNext > 0) { this.failNext--; throw new Error('disk I/O error (test)') }
    this.commits.push({ sessionId, views, at: Date.now() })
    if (this.holdWith !== null) await this.holdWith
    this.#noteUnmapped(sessionId, views)
  }

  #noteUnmapped (sessionId: string, views: StatusView[]): void {
    const unmapped = this.unmapped.get(sessionId) ?? []
    for (const v of views) if (v.viewerNumber === null && !unmapped.includes(v.viewerJid)) unmapped.push(v.viewerJid)
    this.unmapped.set(sessionId, unmapped)
  }

  async lidsMapped (sessionId: string, mappings: Array<{ lid: string, number: string }>): Promise<void> {
    for (const m of mappings) this.mapped.push({ sessionId, ...m })
    const left = (this.unmapped.get(sessionId) ?? []).filter((lid) => !mappings.some((m) => m.lid === lid))
    this.unmapped.set(sessionId, left)
  }

  async unmappedLids (sessionId: string, limit: number): Promise<string[]> {
    return (this.unmapped.get(sessionId) ?? []).slice(0, limit)
  }

  views (sessionId: string, since = 0): StatusView[] {
    return this.commits.slice(since).filter((c) => c.sessionId === sessionId).flatMap((c) => c.views)
  }
}

/** The session rows without the service's event log: the announcements handed over with a write are kept in `handed`. */
function unlogged (sessions: SessionStore, handed: ConnectionStatusChange[]): SessionLinks {
  const keep = (change: ConnectionStatusChange | null): void => { if (change !== null) handed.push(change) }
  return {
    get: sessions.storedOne,
    markLinked: async (id, ownNumber, ownLid, change) => { await sessions.markLinked(id, ownNumber, ownLid); keep(change) },
    markUnlinked: async (id, change) => { await sessions.markUnlinked(id); keep(change) }
  }
}

export interface PlatformUnderTest { platform: Platform, events: EventLog, logs: LogSink, sink: RecordingSink, handed: ConnectionStatusChange[] }

/** `links`: wraps the session rows the platform writes (e.g. to hold a write back, as a slow database would) */
export function startPlatform (db: DbHandle, wa: Config['wa'], timing: Partial<PlatformTiming> = FAST_TIMING, links: (rows: SessionLinks) => SessionLinks = (rows) => rows, more: Pick<PlatformOptions, 'contactStatusSink'> = {}): PlatformUnderTest {
  const logs = new LogSink()
  const logger = pino({ level: process.env.TEST_LOG_LEVEL ?? 'info' }, logs.stream)
  const sink = new RecordingSink()
  const handed: ConnectionStatusChange[] = []
  // SPEED_TRICKS_OFF in the environment (test/foundation/speed-tricks-off.test.ts), as the service's config takes it
  const off = parseSpeedTricksOff(process.env.SPEED_TRICKS_OFF).off
  const gcOff = off.has('burst-gc') ? { burstGcQuietMs: null } : {}
  const platform = createPlatform({
    authState: authStateStore(db.db),
    links: links(unlogged(storesOf(db).sessions, handed)),
    receiptSink: sink, wa, logger, timing: { ...timing, ...gcOff }, sharedKeyTransactions: !off.has('shared-key-transactions'), ...more
  })
  return { platform, events: new EventLog(platform), logs, sink, handed }
}

/** Media uploads go over HTTPS to the emulator, whose certificate is trusted only via NODE_EXTRA_CA_CERTS. */
export function mediaTrusted (): boolean {
  const ca = process.env.NODE_EXTRA_CA_CERTS
  return ca !== undefined && resolve(ca) === testCertPaths().certFile
}

export const digitsOf = (jid: string): string => jid.split('@')[0].split(':')[0]
