import type { Generated, Selectable } from 'kysely'
/** milliseconds since the epoch (as in database.ts) */
type Millis = number

// The saved audiences table (migration 014), beside database.ts.

/** A saved audience: a named list of numbers of one session. */
export interface AudienceTable {
  /** creation order (the list's cursor) */
  seq: Generated<number>
  /** `aud_` + random */
  id: string
  session_id: string
  name: string
  /** comma-separated digits, validated and de-duplicated, in the order given */
  numbers: string
  number_count: number
  created_at: Millis
  updated_at: Millis
}

export type AudienceRow = Selectable<AudienceTable>
