import type { ColumnType, Generated, Selectable } from 'kysely'
/** milliseconds since the epoch (as in database.ts) */
type Millis = number

// The contacts' statuses table (migration 015), beside database.ts.

/** A status one of the session's contacts posted, as the platform delivered it; kept 24 hours. */
export interface ContactStatusTable {
  /** arrival order (the list's cursor, newest first) */
  seq: Generated<number>
  session_id: string
  /** the platform's message id */
  message_id: string
  /** `<lid>@lid` or `<number>@s.whatsapp.net`, as the platform named the poster */
  from_jid: string
  from_lid: string | null
  /** digits; null while a LID is not mapped */
  from_number: string | null
  /** text, image, video, audio, other, undecryptable */
  type: string
  text: string | null
  caption: string | null
  mimetype: string | null
  size: number | null
  /** what downloading the media takes (JSON; holds its key: never sent out) */
  media_ref: string | null
  /** why it could not be read */
  error: string | null
  posted_at: Millis
  received_at: Millis
  /** when the read receipt was sent (POST …/view); null: never */
  viewed_at: Millis | null
  /** 1: the status mentions the account (migration 021) */
  mentions_me: ColumnType<number, number | undefined, number>
  /** a group status' group (`…@g.us`) and its subject when known; null otherwise (migration 021) */
  group_jid: ColumnType<string | null, string | null | undefined, string | null>
  group_subject: ColumnType<string | null, string | null | undefined, string | null>
}

export type ContactStatusRow = Selectable<ContactStatusTable>

/** The account's like of a contact's status (migration 021): one per status; taken back, the row goes. */
export interface ContactStatusLikeTable {
  status_seq: number
  emoji: string
  message_id: string
  liked_at: Millis
}

/** A reply the account sent to a contact's status (migration 021), recorded once the platform acknowledged it. */
export interface ContactStatusReplyTable {
  seq: Generated<number>
  status_seq: number
  message_id: string
  text: string
  sent_at: Millis
}
