import type { Kysely } from 'kysely'
import type { Database } from '../database.js'

/** A status's delivery receipts, first delivery per recipient (see the receipt sink for how they are written). */
export async function listDeliveries (
  db: Kysely<Database>, statusId: number
): Promise<Array<{ recipient: string, number: string | null, jid: string, delivered_at: number }>> {
  return await db.selectFrom('status_deliveries').select(['recipient', 'number', 'jid', 'delivered_at']).where('status_id', '=', statusId).orderBy('delivered_at').execute()
}
