// The statuses recorded, their shared types, and who waits on them (StatusCenter's first layer).
import type { BinaryNode } from '@whiskeysockets/baileys'
import type { Logger } from 'pino'
import type { Account, Directory, Party } from './accounts.js'
import { EmulatorError } from './errors.js'
import { MediaServer } from './media-server.js'
import type { SimulatedDevice } from './signal-party.js'
import type { RuleBreak } from './status-rules.js'
import type { RejectedMessage, StatusKind, StatusRecord } from './types.js'

export const STATUS_JID = 'status@broadcast'
/** Yield to the event loop every this many device decryptions so acks/receipts keep flowing. */
export const YIELD_EVERY = 20

export interface StatusState {
  record: StatusRecord
  /** `${number}:${device}` addressed so far, to spot devices that got the status twice */
  addressed: Set<string>
  recipients: Set<string>
  audience: Set<string>
  contentDigest?: string
}

/** The server's answer to one stanza: undefined = accepted, else the rule it broke (NACK 479). */
export type Verdict = (broken: RuleBreak | undefined) => void

/** What was decided for one stanza (once; whoever knows first: the stanza, the peek or the queue). */
export interface Decision {
  decided: boolean
  kind?: StatusKind
  broken?: RuleBreak
}

export interface FanoutTarget {
  jid: string
  deviceId: number
  enc?: BinaryNode
  party?: Party
}

export interface RevokeState {
  revokeId: string
  targetId: string
  recipients: Set<string>
}

export interface Waiter {
  predicate: (status: StatusRecord) => boolean
  resolve: (status: StatusRecord) => void
  reject: (error: Error) => void
}

/** A device told to fail a status (`failNextDecrypt`) asks for it again with this retry count. */
export interface RetryAsk {
  device: SimulatedDevice
  party: Party
  count: number
}

/** What the poster is sent: the retry receipt, as the server hands it over. */
export type RetrySender = (poster: Account, posterDevice: number, receipt: BinaryNode) => void

export function bigEndian (value: number, bytes: number): Buffer {
  const out = Buffer.alloc(bytes)
  out.writeUIntBE(value, 0, bytes)
  return out
}

export function b64 (data: Uint8Array | null | undefined): string {
  return data ? Buffer.from(data).toString('base64') : ''
}

export function copy (record: StatusRecord): StatusRecord {
  return {
    ...record,
    media: record.media ? { ...record.media } : undefined,
    recipients: [...record.recipients],
    deliveries: record.deliveries.map((d) => ({ ...d })),
    duplicateRecipients: [...record.duplicateRecipients],
    errors: [...record.errors],
    stanzas: record.stanzas.map((st) => ({
      ...st, attrs: { ...st.attrs }, audience: [...st.audience], devices: [...st.devices], skdmDevices: [...st.skdmDevices]
    })),
    audience: [...record.audience],
    skdmDevices: [...record.skdmDevices],
    rejected: record.rejected ? { ...record.rejected } : undefined,
    revokedFor: record.revokedFor ? [...record.revokedFor] : undefined,
    retries: record.retries.map((r) => ({ ...r, violations: [...r.violations] })),
    ...(record.mentionedUsers ? { mentionedUsers: [...record.mentionedUsers] } : {})
  }
}

/**
 * The statuses recorded and who waits on them: the first layer of StatusCenter (statuses.ts), one concern per
 * file, each extending the one before: status-book.ts → status-decryption.ts → status-retries.ts → statuses.ts.
 */
export abstract class StatusBook {
  protected readonly states = new Map<string, StatusState>()
  /** each status's messageSecret, by id */
  protected readonly secrets = new Map<string, Buffer>()
  protected readonly revokes = new Map<string, RevokeState>()
  protected queue: Promise<void> = Promise.resolve()
  protected pending = 0
  protected readonly waiters = new Set<Waiter>()
  protected readonly idleWaiters = new Set<() => void>()
  /** stanzas NACKed under the rules (status-rules.ts) */
  readonly rejected: RejectedMessage[] = []
  /** per poster device (`number:device`): the last sender key distribution message any device decrypted */
  protected readonly lastSenderKey = new Map<string, Buffer>()

  constructor (
    protected readonly directory: Directory,
    protected readonly media: MediaServer,
    protected readonly logger: Logger,
    /** delivers a retry receipt to the device that posted */
    protected readonly sendRetry: RetrySender = () => {},
    /** an answer to a retry receipt must be WA Web's (EmulatorOptions.strictStatusRetries) */
    protected readonly strictRetries = true
  ) {}

  protected settle (): void {
    this.pending--
    if (this.pending === 0) {
      for (const resolve of this.idleWaiters) resolve()
      this.idleWaiters.clear()
    }
  }

  list (): StatusRecord[] {
    return [...this.states.values()].map((s) => copy(s.record))
  }

  /** the status' messageSecret (an encrypted reaction to it is made with it: interactions.ts) */
  secretOf (id: string): Buffer | undefined {
    return this.secrets.get(id)
  }

  get (id: string): StatusRecord {
    const state = this.states.get(id)
    if (!state) throw new EmulatorError(404, `no status ${id}`)
    return copy(state.record)
  }

  has (id: string): boolean {
    return this.states.has(id)
  }

  waitFor (predicate: (status: StatusRecord) => boolean, timeoutMs: number): Promise<StatusRecord> {
    for (const state of this.states.values()) {
      if (predicate(state.record)) return Promise.resolve(copy(state.record))
    }
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        predicate,
        resolve: (status) => {
          clearTimeout(timer)
          this.waiters.delete(waiter)
          resolve(copy(status))
        },
        reject: (error) => {
          clearTimeout(timer)
          reject(error)
        }
      }
      const timer = setTimeout(() => {
        this.waiters.delete(waiter)
        reject(new EmulatorError(504, `no matching status within ${timeoutMs} ms`))
      }, timeoutMs)
      this.waiters.add(waiter)
    })
  }

  /** Resolves once every queued stanza has been processed. */
  idle (timeoutMs: number): Promise<void> {
    if (this.pending === 0) return Promise.resolve()
    return new Promise((resolve, reject) => {
      const done = () => {
        clearTimeout(timer)
        resolve()
      }
      const timer = setTimeout(() => {
        this.idleWaiters.delete(done)
        reject(new EmulatorError(504, `status decryption still busy after ${timeoutMs} ms`))
      }, timeoutMs)
      this.idleWaiters.add(done)
    })
  }

  /** Release everyone waiting (the emulator is stopping). */
  close (): void {
    for (const resolve of this.idleWaiters) resolve()
    this.idleWaiters.clear()
    for (const waiter of this.waiters) waiter.reject(new EmulatorError(409, 'emulator stopped'))
    this.waiters.clear()
  }

  protected notify (record: StatusRecord): void {
    for (const waiter of [...this.waiters]) {
      if (waiter.predicate(record)) waiter.resolve(record)
    }
  }
}
