import type { ColumnType, Generated, Insertable, Selectable } from 'kysely'

/** All times are stored as integer milliseconds since the epoch and turned into ISO 8601 at the edge. */
type Millis = number

export interface SessionTable {
  id: string
  name: string
  auth_method: 'pairing' | 'qrcode'
  phone_number: string | null
  /** digits of the linked account; kept while unlinked so the UI can show who it was */
  own_number: string | null
  own_lid: string | null
  /** 1 once the platform accepted the link (creds registered); 0 after logout */
  linked: ColumnType<number, number | undefined, number>
  created_at: Millis
}

export interface AuthCredsTable {
  session_id: string
  /** Baileys AuthenticationCreds serialised with BufferJSON */
  creds: string
  updated_at: Millis
}

export interface AuthKeyTable {
  session_id: string
  type: string
  key_id: string
  /** Baileys SignalDataTypeMap value serialised with BufferJSON */
  value: string
}

export interface StatusTable {
  id: Generated<number>
  session_id: string
  type: 'text' | 'image' | 'video' | 'audio' | 'url'
  content: string
  caption: string
  /** platform message id; set before sending so receipts that race the insert still match */
  message_id: string
  /**
   * 'sending' while chunks go out (or until a send interrupted by a crash is resumed), 'sent' once every
   * recipient has it, 'partial' when sending stopped with some of them (logout, reconnect timeout, restart,
   * an error). A send that stopped before anyone had it leaves no row.
   */
  state: StatusState
  created_at: Millis
  contact_count: number
  /** comma-separated requested recipients (digits), as stored */
  target_numbers: string
  /** recipients (as counted by contact_count) the platform acknowledged; see status_recipients */
  sent_count: ColumnType<number, number | undefined, number>
  /** the message as built for the platform (media uploaded), kept so an interrupted send resumes with the same one */
  message_payload: ColumnType<Buffer | null, Buffer | null | undefined, Buffer | null>
  /** upload filename for image/video statuses, null otherwise */
  media_file: string | null
  background_color: string | null
  font: number | null
  /** platform rejection reported after sending (e.g. '479'), or why a partial send stopped; null when fine */
  error: string | null
  /** comma-separated recipients (digits) not sent to: no LID known for them (LID-migrated accounts); '' when none */
  unreachable: ColumnType<string, string | undefined, string>
  /** the audience snapshot (JSON: schemas/audience.ts AudienceSnapshot) when `audience` chose the recipients; null: target_numbers did */
  audience: ColumnType<string | null, string | null | undefined, string | null>
  /** real viewers (is_real = 1), kept by triggers in the transaction that writes the viewers (migration 019) */
  viewer_count: ColumnType<number, never, never>
  /** reactions standing (emoji not ''), kept the same way */
  reaction_count: ColumnType<number, never, never>
  /** replies, kept the same way */
  reply_count: ColumnType<number, never, never>
  /** comma-separated numbers (digits) the status mentions (send-status `mentions`, migration 020); '' when none */
  mentions: ColumnType<string, string | undefined, string>
}

export type StatusState = 'sending' | 'sent' | 'partial'

/** One JID the status went to (own number included), committed chunk by chunk. */
export interface StatusRecipientTable {
  status_id: number
  jid: string
  /** 1: its chunk was acknowledged; 0: written, but the link closed before the ack (it may have it) */
  confirmed: ColumnType<number, number | undefined, number>
}

export interface ViewerTable {
  status_id: number
  /** the key: `number` when known, else the LID (`<lid>@lid`) */
  viewer: string
  /** viewer digits; null while the viewer is a LID without a known number */
  number: string | null
  /** `<number>@s.whatsapp.net`, or the LID while `number` is null */
  jid: string
  viewed_at: Millis
  is_real: number
}

/** A contact's reaction to a status: one per (status, contact), the latest wins. */
export interface StatusReactionTable {
  status_id: number
  /** the key: `number` when known, else the LID (`<lid>@lid`) */
  reactor: string
  number: string | null
  /** `<number>@s.whatsapp.net`, or the LID while `number` is null */
  jid: string
  /** empty: taken back (kept so an older reaction arriving late cannot bring it back) */
  emoji: string
  reacted_at: Millis
  /** platform message id of the reaction */
  message_id: string
}

/** A contact's reply to a status: every one, keyed by its platform message id. */
export interface StatusReplyTable {
  status_id: number
  message_id: string
  /** `number` when known, else the LID */
  replier: string
  number: string | null
  jid: string
  text: string
  /** the message's time (the platform gives seconds) */
  replied_at: Millis
  /** when the service committed it: the order within one second */
  received_at: Millis
}

export interface UploadTable {
  filename: string
  kind: 'image' | 'video' | 'audio'
  mime_type: string
  size: number
  created_at: Millis
}

export interface WebhookTable {
  /** `wh_` + random */
  id: string
  url: string
  /** JSON array of event names; null: every event */
  events: string | null
  /** only this session's events; null: every session */
  session_id: string | null
  description: string | null
  /** `whsec_` + base64 of 24 random bytes (Standard Webhooks) */
  secret: string
  enabled: ColumnType<number, number | undefined, number>
  /** why the service disabled it (410 Gone), null when enabled or disabled by a user */
  disabled_reason: string | null
  created_at: Millis
  updated_at: Millis
  /** the scoped key that created it: it receives only that key's sessions' events; null: made with the admin key */
  key_id: ColumnType<string | null, string | null | undefined, string | null>
}

export type DeliveryStatus = 'pending' | 'sending' | 'succeeded' | 'failed'

export interface WebhookDeliveryTable {
  id: Generated<number>
  webhook_id: string
  /** the `webhook-id` header: the same on every attempt, so receivers can drop duplicates */
  message_id: string
  event_type: string
  session_id: string | null
  /** deliveries with the same key (one status, or one session's other events) are sent in id order */
  order_key: string
  /** the JSON body, fixed when the event happened */
  body: string
  status: DeliveryStatus
  attempts: ColumnType<number, number | undefined, number>
  next_attempt_at: Millis
  last_attempt_at: Millis | null
  last_status_code: number | null
  last_error: string | null
  created_at: Millis
  completed_at: Millis | null
  /** PostgreSQL: the node sending it (status `sending`), and when that claim runs out */
  claimed_by: ColumnType<string | null, string | null | undefined, string | null>
  claimed_until: ColumnType<Millis | null, Millis | null | undefined, Millis | null>
}

/** A node of the cluster (cluster mode); times by the database's clock. */
export interface NodeTable {
  node_id: string
  url: string
  started_at: ColumnType<number, number, number>
  last_seen: ColumnType<number, number, number>
}

/** The secret forwarded requests are signed with, when CLUSTER_SECRET is unset (one row, id 1). */
export interface ClusterSecretTable {
  id: number
  secret: string
}

/** Which node owns a session's socket, until when (cluster mode). */
export interface SessionLeaseTable {
  session_id: string
  node_id: string
  expires_at: ColumnType<number, number, number>
  acquired_at: ColumnType<number, number, number>
  /** the connection status its owner last reported */
  status: string | null
}

/** A scoped API key (the admin key is API_KEY and is never stored). */
export interface ApiKeyTable {
  /** the `<id>` of `stk_<id>_<secret>` */
  id: string
  name: string
  /** hex SHA-256 of the secret */
  secret_hash: string
  /** '*' or a JSON array of session ids */
  sessions: string
  /** JSON array of scopes */
  scopes: string
  created_at: Millis
}

/** An upload made with a scoped key (uploads made with the admin key have no row). */
export interface UploadOwnerTable {
  filename: string
  key_id: string
}

/** One event of the log (migration 008): its id is the event's eventId. */
export interface EventLogTable {
  id: Generated<number>
  type: string
  session_id: string | null
  created_at: Millis
  /** the payload as JSON, without its eventId */
  data: string
}

/** How far a consumer of the event log has got (`webhooks`). */
export interface EventCursorTable {
  name: string
  last_id: number
}

import type { ScheduleTable, ScheduleRunTable, StatusDeliveryTable } from './schedule-tables.js'
export type { ScheduleTable, ScheduleState, RunState, ScheduleRunTable, StatusDeliveryTable } from './schedule-tables.js'
import type { PhoneContactTable, PhoneStatusPrivacyTable } from './phone-tables.js'
export type { PhoneContactTable, PhoneStatusPrivacyTable } from './phone-tables.js'
import type { AudienceTable } from './audience-tables.js'
export type { AudienceTable, AudienceRow } from './audience-tables.js'
import type { ContactStatusLikeTable, ContactStatusReplyTable, ContactStatusTable } from './contact-status-tables.js'
export type { ContactStatusTable, ContactStatusRow } from './contact-status-tables.js'
import type { InsightRecipientTable, InsightStatusTable, InsightViewBucketTable } from './insight-tables.js'
export type { InsightRecipientTable, InsightStatusTable, InsightViewBucketTable } from './insight-tables.js'

export interface Database {
  sessions: SessionTable
  auth_creds: AuthCredsTable
  auth_keys: AuthKeyTable
  statuses: StatusTable
  status_recipients: StatusRecipientTable
  viewers: ViewerTable
  status_reactions: StatusReactionTable
  status_replies: StatusReplyTable
  uploads: UploadTable
  webhooks: WebhookTable
  webhook_deliveries: WebhookDeliveryTable
  nodes: NodeTable
  session_leases: SessionLeaseTable
  api_keys: ApiKeyTable
  upload_owners: UploadOwnerTable
  event_log: EventLogTable
  event_cursors: EventCursorTable
  schedules: ScheduleTable
  schedule_runs: ScheduleRunTable
  status_deliveries: StatusDeliveryTable
  cluster_secret: ClusterSecretTable
  phone_contacts: PhoneContactTable
  phone_status_privacy: PhoneStatusPrivacyTable
  audiences: AudienceTable
  contact_statuses: ContactStatusTable
  contact_status_likes: ContactStatusLikeTable
  contact_status_replies: ContactStatusReplyTable
  insight_statuses: InsightStatusTable
  insight_recipients: InsightRecipientTable
  insight_view_buckets: InsightViewBucketTable
}

export type SessionRow = Selectable<SessionTable>
export type NewSessionRow = Insertable<SessionTable>
export type NewStatusRow = Insertable<StatusTable>
export type NewUploadRow = Insertable<UploadTable>
export type WebhookRow = Selectable<WebhookTable>
export type WebhookDeliveryRow = Selectable<WebhookDeliveryTable>
export type ApiKeyRow = Selectable<ApiKeyTable>
export type ScheduleRow = Selectable<ScheduleTable>
export type ScheduleRunRow = Selectable<ScheduleRunTable>
