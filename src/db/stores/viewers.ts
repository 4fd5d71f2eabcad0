import type { Kysely } from 'kysely'
import type { Database } from '../database.js'
import type { NewEvent } from './events.js'

/** A viewer of a status: who, when, and whether a real contact. */
export interface ViewerRecord {
  statusId: number
  /** the key: `number` when known, else the LID (`<lid>@lid`) */
  viewer: string
  /** digits; null while the viewer is a LID without a known number */
  number: string | null
  /** `<number>@s.whatsapp.net`, or the LID while `number` is null */
  jid: string
  viewedAt: number
  /** 1: a real contact's view (as stored; 0: the own account's devices and the like) */
  isReal: number
}

/** A contact's standing reaction to a status (the latest wins). */
export interface ReactionRecord {
  statusId: number
  /** the key: `number` when known, else the LID */
  reactor: string
  number: string | null
  jid: string
  /** empty: taken back */
  emoji: string
  reactedAt: number
  /** the platform's message id of the reaction */
  messageId: string
}

/** A contact's reply to a status. */
export interface ReplyRecord {
  statusId: number
  /** the platform's message id of the reply */
  messageId: string
  /** the key: `number` when known, else the LID */
  replier: string
  number: string | null
  jid: string
  text: string
  /** the message's time (the platform gives seconds) */
  repliedAt: number
  /** when the service committed it: the order within one second */
  receivedAt: number
}

// Row ↔ record, once for both backends: each read names the columns as the record's fields, so rows come out
// as records with no mapping pass (the receipt commit reads viewer lists inside its transaction).

/** a viewer's columns as its record's fields, for SQL text (the same words on SQLite and PostgreSQL) */
export const VIEWER_FIELDS_SQL = 'status_id as "statusId", viewer, number, jid, viewed_at as "viewedAt", is_real as "isReal"'
/** the same, for Kysely */
export const VIEWER_FIELDS = ['status_id as statusId', 'viewer', 'number', 'jid', 'viewed_at as viewedAt', 'is_real as isReal'] as const
/** a reaction's columns as its record's fields */
export const REACTION_FIELDS = [
  'status_id as statusId', 'reactor', 'number', 'jid', 'emoji', 'reacted_at as reactedAt', 'message_id as messageId'
] as const
/** a reply's columns as its record's fields */
export const REPLY_FIELDS = [
  'status_id as statusId', 'message_id as messageId', 'replier', 'number', 'jid', 'text', 'replied_at as repliedAt', 'received_at as receivedAt'
] as const

type Db = Kysely<Database>

export interface ViewToRecord {
  sessionId: string
  /** platform message id of the status */
  messageId: string
  /** digits; null when the viewer is a LID without a known number */
  number: string | null
  /** `<number>@s.whatsapp.net`, or the LID when `number` is null */
  jid: string
  viewedAt: number
  isReal: boolean
}

/** A delivery receipt to record: the earliest per (status, recipient) is kept; own devices are not recorded. */
export interface DeliveryToRecord {
  sessionId: string
  messageId: string
  number: string | null
  jid: string
  deliveredAt: number
}

/** What one commit changed in one status: its new viewers (in commit order), if any. */
export interface StatusChange {
  sessionId: string
  messageId: string
  added: ViewToRecord[]
}

/** What a commit read for its events, inside its own transaction (so it counts its own rows). */
export interface CommitReads {
  /** real viewers (`viewerCount`) of the statuses asked for */
  counts: Map<number, number>
  /** full viewer lists of the statuses asked for, first view first */
  lists: Map<number, ViewerRecord[]>
}

/**
 * The events a commit appends to the event log in its own transaction, once its rows are in and only when
 * a status changed: `needs` says which statuses' counts and lists to read there, `events` builds the rows.
 * Both run inside the transaction and must not wait on anything.
 */
export interface InCommit<C> {
  needs: (changes: C) => { counts?: number[], lists?: number[] }
  events: (changes: C, read: CommitReads) => NewEvent[]
}

export interface ReactionToRecord {
  /** digits; null while the contact is a LID without a known number */
  number: string | null
  /** `<number>@s.whatsapp.net`, or the LID */
  jid: string
  statusMessageId: string
  messageId: string
  at: number
}

export type LidMapping = { lid: string, number: string }

/** What one receipt turn carries: its views and its delivery receipts. */
export interface ReceiptTurn {
  views: ViewToRecord[]
  deliveries: DeliveryToRecord[]
}

/** Viewers, delivery receipts, reactions and replies of statuses: what contacts did with them. */
export interface ViewerStore {
  /**
   * THE receipt path's commit (commit before ack): the views and deliveries of one receipt turn and the
   * events they cause, in one transaction. Resolves only once the rows are committed (SQLite: WAL,
   * synchronous=NORMAL, a killed process keeps them); the caller acks the stanzas after it, and never
   * when it rejects. Receipts of unknown statuses are skipped; one row per (status, viewer), the first
   * view time wins (deliveries: the first delivery per recipient). Resolves to the statuses whose viewer
   * list changed, with the viewers that are new in each.
   */
  commitReceipts: (turn: ReceiptTurn, inCommit: InCommit<Map<number, StatusChange>>) => Promise<Map<number, StatusChange>>
  /**
   * Views and deliveries stored under a LID get its number (merged with a row the number has, the earlier
   * time wins), with the events of the changed statuses in the same transaction; the changed statuses.
   */
  mapLids: (sessionId: string, mappings: LidMapping[], inCommit: InCommit<Set<number>>) => Promise<Set<number>>
  /** LIDs of the session's views that have no number yet */
  unmappedLids: (sessionId: string, limit: number) => Promise<string[]>
  /** The events of these statuses built from their lists, read and appended in one transaction of its own. */
  commitListEvents: (statusIds: number[], events: (lists: Map<number, ViewerRecord[]>) => NewEvent[]) => Promise<void>
  /** Viewers of one status, first view first. */
  list: (statusId: number) => Promise<ViewerRecord[]>
  /**
   * The statuses named by status-viewers-added events in the log's last `spanMs` (counted back from its
   * newest event), with their sessions: what was viewed in the moments before the service stopped.
   */
  recentlyViewed: (spanMs: number) => Promise<Array<{ statusId: number, sessionId: string }>>

  /**
   * A reaction: the contact's row takes it when it is newer than the one stored (an empty emoji stays as
   * the taken-back state). The row when something changed; undefined for an unknown status, an older
   * reaction or the same message again (a redelivery).
   */
  recordReaction: (sessionId: string, r: ReactionToRecord & { emoji: string }) => Promise<ReactionRecord | undefined>
  /** A reply; undefined for an unknown status or a message already recorded (a redelivery). */
  recordReply: (sessionId: string, r: ReactionToRecord & { text: string }) => Promise<ReplyRecord | undefined>
  /** Current reactions of a status (taken-back ones left out), first first. */
  reactions: (statusId: number) => Promise<ReactionRecord[]>
  /** Replies to a status, oldest first. */
  replies: (statusId: number) => Promise<ReplyRecord[]>
  /** LIDs of the session's reactions and replies without a number */
  unmappedInteractionLids: (sessionId: string, limit: number) => Promise<string[]>
  /** Reactions and replies stored under a LID get its number; the statuses whose reactions or replies changed. */
  mapInteractionLids: (sessionId: string, mappings: LidMapping[]) => Promise<Set<number>>
}

export type ReceiptPart = Pick<ViewerStore, 'commitReceipts' | 'mapLids' | 'unmappedLids' | 'commitListEvents' | 'list' | 'recentlyViewed'>

export async function listViewers (db: Db, statusId: number): Promise<ViewerRecord[]> {
  return await db.selectFrom('viewers').select(VIEWER_FIELDS).where('status_id', '=', statusId).orderBy('viewed_at').orderBy('viewer').execute()
}
