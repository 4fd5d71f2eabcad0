import type { Generated } from 'kysely'
/** milliseconds since the epoch (as in database.ts) */
type Millis = number

// The insights tables (migration 017), beside database.ts: what stays of a status after it expired.

/** A status's summary, written when it expired or was deleted. */
export interface InsightStatusTable {
  /** never reused */
  id: Generated<number>
  session_id: string
  /** the former statuses.id */
  status_id: number
  message_id: string
  type: string
  caption_length: number
  /** 'numbers', or the audience snapshot's type: list, contacts, phone, saved */
  audience_kind: string
  audience_id: string | null
  audience_name: string | null
  /** contact_count */
  audience_size: number
  posted_at: Millis
  summarised_at: Millis
  recipients: number
  delivered: number
  viewed: number
  reacted: number
  replied: number
  first_view_ms: number | null
  median_view_ms: number | null
}

/** One recipient line of a summary (the per-status report's line). */
export interface InsightRecipientTable {
  insight_id: number
  session_id: string
  /** the status's, copied for range scans */
  posted_at: Millis
  /** digits, or `<lid>@lid` */
  recipient: string
  delivered_at: Millis | null
  viewed_at: Millis | null
  /** 1: a (non-empty) reaction */
  reacted: number
  /** how many replies */
  replies: number
}

/** A summary's views per quarter hour of viewing and of time to view, kept by a trigger on insight_recipients (migration 017). */
export interface InsightViewBucketTable {
  insight_id: number
  session_id: string
  posted_at: Millis
  /** floor(viewed_at / 900,000) */
  bucket: number
  /** floor(time to view / 900,000) */
  delay_bucket: number
  views: number
}
