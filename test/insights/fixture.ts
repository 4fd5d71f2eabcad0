import type { Kysely } from 'kysely'
import type { Database } from '../../src/db/database.js'

// A session with two statuses and their facts, written as rows, and the figures they make counted by hand
// (test/insights/*.test.ts). Own number 1000. T0 is a Monday, 10:00 UTC (by default 5 January 2026; a
// service test takes `recentMonday()`, within insights' retention and a week before now).
//
// S1 (text 'hello', targetNumbers 1111,2222,3333): delivered to 1111 (+1 s) and 2222 (+2 s); viewed by 1111
// (+60 s) and 3333 (+120 s, no receipt: the view implies delivery), by the own number and by a non-real
// viewer 4444 (both left out); reactions: 1111 🔥, 2222 taken back (''); replies: 3333 twice, 5555 once (not
// meant for them: a line of its own). S2 (image, caption 'ça va', saved audience aud_vip 'VIP' of 1111 and
// 2222), posted a day later: nobody viewed it.

export const T0 = Date.UTC(2026, 0, 5, 10, 0)
const DEFAULT_T0 = T0
export const DAY = 86_400_000
export const OWN = '1000'

export interface Fixture { s1: number, s2: number }

/** The Monday 10:00 UTC between 7 and 14 days before now. */
export function recentMonday (now = Date.now()): number {
  const d = new Date(now - 7 * DAY)
  const back = (d.getUTCDay() + 6) % 7
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() - back, 10, 0)
}

export async function writeFixture (db: Kysely<Database>, sessionId = 's1', T0 = DEFAULT_T0): Promise<Fixture> {
  await db.insertInto('sessions').values({ id: sessionId, name: sessionId, auth_method: 'qrcode', phone_number: null, own_number: OWN, own_lid: null, created_at: T0 - DAY }).execute()
  const base = { session_id: sessionId, state: 'sent' as const, media_file: null, background_color: null, font: null, error: null }
  const { id: s1 } = await db.insertInto('statuses').values({
    ...base, type: 'text', content: 'hello', caption: '', message_id: `${sessionId}-M1`, created_at: T0, contact_count: 3, target_numbers: '1111,2222,3333'
  }).returning('id').executeTakeFirstOrThrow()
  const audience = JSON.stringify({ type: 'saved', audienceId: 'aud_vip', name: 'VIP', except: null, mode: null, statusSetting: 'allowlist', recipients: ['1111', '2222'] })
  const { id: s2 } = await db.insertInto('statuses').values({
    ...base, type: 'image', content: 'x.jpg', caption: 'ça va', message_id: `${sessionId}-M2`, created_at: T0 + DAY, contact_count: 2, target_numbers: '', audience
  }).returning('id').executeTakeFirstOrThrow()
  const who = (n: string) => ({ number: n, jid: `${n}@s.whatsapp.net` })
  await db.insertInto('status_deliveries').values([
    { status_id: s1, recipient: '1111', ...who('1111'), delivered_at: T0 + 1000 },
    { status_id: s1, recipient: '2222', ...who('2222'), delivered_at: T0 + 2000 }
  ]).execute()
  await db.insertInto('viewers').values([
    { status_id: s1, viewer: '1111', ...who('1111'), viewed_at: T0 + 60_000, is_real: 1 },
    { status_id: s1, viewer: '3333', ...who('3333'), viewed_at: T0 + 120_000, is_real: 1 },
    { status_id: s1, viewer: OWN, ...who(OWN), viewed_at: T0 + 5000, is_real: 1 },
    { status_id: s1, viewer: '4444', ...who('4444'), viewed_at: T0 + 7000, is_real: 0 }
  ]).execute()
  await db.insertInto('status_reactions').values([
    { status_id: s1, reactor: '1111', ...who('1111'), emoji: '🔥', reacted_at: T0 + 70_000, message_id: `${sessionId}-R1` },
    { status_id: s1, reactor: '2222', ...who('2222'), emoji: '', reacted_at: T0 + 80_000, message_id: `${sessionId}-R2` }
  ]).execute()
  await db.insertInto('status_replies').values([
    { status_id: s1, message_id: `${sessionId}-P1`, replier: '3333', ...who('3333'), text: 'hi', replied_at: T0 + 130_000, received_at: T0 + 130_000 },
    { status_id: s1, message_id: `${sessionId}-P2`, replier: '3333', ...who('3333'), text: 'again', replied_at: T0 + 140_000, received_at: T0 + 140_000 },
    { status_id: s1, message_id: `${sessionId}-P3`, replier: '5555', ...who('5555'), text: 'me too', replied_at: T0 + 150_000, received_at: T0 + 150_000 }
  ]).execute()
  await db.insertInto('phone_contacts').values({ session_id: sessionId, jid: '1111@s.whatsapp.net', number: '1111', lid: null, name: 'Ann', updated_at: T0 }).execute()
  return { s1, s2 }
}

/** The range covering both statuses. */
export const RANGE = { from: T0 - DAY, to: T0 + 2 * DAY }
