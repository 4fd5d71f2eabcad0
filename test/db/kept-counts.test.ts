import assert from 'node:assert/strict'
import { storesOf, type Stores } from '../../src/db/stores/index.js'
import { Migrator } from 'kysely'
import type { DbHandle } from '../../src/db/connection.js'
import { migrationProvider } from '../../src/db/migrations/index.js'
import type { InCommit, ViewToRecord } from '../../src/db/stores/viewers.js'
import { keptCounts, recountedCounts, type StatusCounts } from '../support/db.js'
import { dialectTest, openTestDb } from '../support/db-matrix.js'

// Issue 41, counts kept, not counted: each status row keeps its real viewers, standing reactions and replies
// (migration 019), written in the transaction that writes the rows. Every write path of the stores is taken
// here, scripted and then in a seeded random walk, and after each step the columns must equal a recount from
// the rows: a repeated view, an own device's view, a LID merged into its number's row, a changed or taken-back
// reaction, a redelivered reply, a deleted status, an expired one, a removed session.

type Counts = StatusCounts
const kept = async (handle: DbHandle): Promise<Counts> => await keptCounts(handle.db)
const recount = async (handle: DbHandle): Promise<Counts> => await recountedCounts(handle.db)

// one set of stores per connection, built before a test moves the schema (SQLite prepares its statements as they are built)
const built = new WeakMap<DbHandle, Stores>()
function storesFor (handle: DbHandle): Stores {
  const stores = built.get(handle) ?? storesOf(handle)
  built.set(handle, stores)
  return stores
}

const quiet: InCommit<unknown> = { needs: () => ({}), events: () => [] }

async function status (handle: DbHandle, sessionId: string, messageId: string, createdAt = Date.now()): Promise<number> {
  return await storesFor(handle).statuses.insert({
    sessionId: sessionId, type: 'text', content: 'x', caption: '', messageId: messageId, state: 'sent', createdAt: createdAt,
    contactCount: 2, targetNumbers: '', mediaFile: null, backgroundColor: null, font: null, error: null
  })
}

async function session (handle: DbHandle, id: string): Promise<void> {
  await storesFor(handle).sessions.insert({ id, name: id, authMethod: 'qrcode', phoneNumber: null, createdAt: 1 })
}

const jidOf = (who: string): string => who.endsWith('@lid') ? who : `${who}@s.whatsapp.net`
const numberOf = (who: string): string | null => who.endsWith('@lid') ? null : who
const view = (messageId: string, who: string, viewedAt: number, isReal = true, sessionId = 's1'): ViewToRecord =>
  ({ sessionId, messageId, number: numberOf(who), jid: jidOf(who), viewedAt, isReal })

dialectTest('kept counts: every write path keeps the columns equal to a recount', async (t, dialect) => {
  const handle = await openTestDb(t, dialect)
  const store = storesFor(handle).viewers
  const statuses = storesFor(handle).statuses
  await session(handle, 's1')
  await session(handle, 's2')
  const a = await status(handle, 's1', 'A')
  const b = await status(handle, 's1', 'B')
  const c = await status(handle, 's2', 'C')
  const check = async (what: string, expected?: Counts): Promise<void> => {
    const columns = await kept(handle)
    assert.deepEqual(columns, await recount(handle), what)
    if (expected !== undefined) assert.deepEqual(columns, expected, what)
  }
  const receipts = async (views: ViewToRecord[]): Promise<void> => { await store.commitReceipts({ views, deliveries: [] }, quiet) }

  // views: a turn with a repeat in it, an own device (not real), an unknown status, two statuses at once
  await receipts([view('A', '1555', 50), view('A', '1555', 40), view('A', '1556', 60), view('A', '1557', 70, false), view('nope', '1558', 1), view('B', '1555', 5)])
  await check('first views', { [a]: [2, 0, 0], [b]: [1, 0, 0], [c]: [0, 0, 0] })
  await receipts([view('A', '1555', 80), view('A', '1556', 10), view('B', '1555', 1)])
  await check('repeated views (later, earlier) count once', { [a]: [2, 0, 0], [b]: [1, 0, 0], [c]: [0, 0, 0] })
  // LIDs: one onto a number that viewed too (merged: once), one onto a new number, one onto an own device
  await receipts([view('A', '71@lid', 30), view('A', '72@lid', 31), view('B', '71@lid', 2), view('A', '73@lid', 3)])
  await check('LID views', { [a]: [5, 0, 0], [b]: [2, 0, 0], [c]: [0, 0, 0] })
  await store.mapLids('s1', [{ lid: '71@lid', number: '1555' }, { lid: '72@lid', number: '1559' }, { lid: '73@lid', number: '1557' }], quiet)
  // 71 merged into 1555's row, 72 became 1559, 73 merged into the own device's row (which stays not real)
  await check('LIDs mapped: merged rows counted once', { [a]: [3, 0, 0], [b]: [1, 0, 0], [c]: [0, 0, 0] })
  // a later view of the merged number changes nothing
  await receipts([view('A', '1555', 90), view('A', '1559', 91)])
  await check('views after the merge', { [a]: [3, 0, 0], [b]: [1, 0, 0], [c]: [0, 0, 0] })

  // reactions: new, changed emoji, an older one ignored, a redelivery, taken back, back again
  const react = async (who: string, messageId: string, emoji: string, at: number, statusMessageId = 'A'): Promise<void> => {
    await store.recordReaction('s1', { number: numberOf(who), jid: jidOf(who), statusMessageId, messageId, emoji, at })
  }
  await react('1555', 'R1', '👍', 100)
  await react('1556', 'R2', '🔥', 100)
  await check('reactions', { [a]: [3, 2, 0], [b]: [1, 0, 0], [c]: [0, 0, 0] })
  await react('1555', 'R3', '😂', 200)
  await react('1555', 'R0', '👍', 150)
  await react('1555', 'R3', '😂', 200)
  await check('a changed emoji counts once', { [a]: [3, 2, 0], [b]: [1, 0, 0], [c]: [0, 0, 0] })
  await react('1556', 'R4', '', 300)
  await check('a taken-back reaction', { [a]: [3, 1, 0], [b]: [1, 0, 0], [c]: [0, 0, 0] })
  await react('1556', 'R5', '❤', 400)
  await react('1557', 'R6', '', 400)
  await check('back again; a first reaction that is a take-back', { [a]: [3, 2, 0], [b]: [1, 0, 0], [c]: [0, 0, 0] })
  // reactions under LIDs, mapped: onto a number with a reaction (merged) and onto one without
  await react('81@lid', 'R7', '🎉', 500)
  await react('82@lid', 'R8', '🎉', 500)
  await react('83@lid', 'R9', '', 500)
  await check('LID reactions', { [a]: [3, 4, 0], [b]: [1, 0, 0], [c]: [0, 0, 0] })
  await store.mapInteractionLids('s1', [{ lid: '81@lid', number: '1555' }, { lid: '82@lid', number: '1560' }, { lid: '83@lid', number: '1556' }])
  // 81 merged into 1555's (its later 🎉 kept), 82 became 1560, 83's later take-back merged into 1556's ❤
  await check('LID reactions mapped', { [a]: [3, 2, 0], [b]: [1, 0, 0], [c]: [0, 0, 0] })

  // replies: new, redelivered, under a LID then mapped
  const reply = async (who: string, messageId: string, statusMessageId = 'A'): Promise<void> => {
    await store.recordReply('s1', { number: numberOf(who), jid: jidOf(who), statusMessageId, messageId, text: 'hi', at: 600 })
  }
  await reply('1555', 'P1')
  await reply('1555', 'P1')
  await reply('91@lid', 'P2')
  await reply('1555', 'P3', 'B')
  await store.mapInteractionLids('s1', [{ lid: '91@lid', number: '1555' }])
  await check('replies', { [a]: [3, 2, 2], [b]: [1, 0, 1], [c]: [0, 0, 0] })

  // deletes: a status, then expiry, then a session; the others keep their counts
  await receipts([view('C', '1555', 1, true, 's2'), view('C', '1556', 1, true, 's2')])
  assert.equal(await statuses.remove(b), true)
  await check('a status deleted', { [a]: [3, 2, 2], [c]: [2, 0, 0] })
  await storesFor(handle).sessions.remove('s2')
  await check('a session removed', { [a]: [3, 2, 2] })
  await statuses.deleteBefore(Date.now() + 1)
  await check('expired', {})

  // and the list reads them
  const d = await status(handle, 's1', 'D')
  await receipts([view('D', '1555', 1), view('D', '1556', 2, false)])
  await react('1555', 'R10', '👍', 1, 'D')
  await reply('1555', 'P4', 'D')
  assert.deepEqual((await statuses.listSent('s1', 0)).map((r) => [r.id, r.viewerCount, r.reactionCount, r.replyCount]), [[d, 1, 1, 1]])
})

dialectTest('kept counts: a seeded random walk of views, LIDs, reactions and replies', async (t, dialect) => {
  const handle = await openTestDb(t, dialect)
  const store = storesFor(handle).viewers
  await session(handle, 's1')
  const messages = ['A', 'B', 'C']
  for (const m of messages) await status(handle, 's1', m)
  // a small, fixed pseudo-random sequence (mulberry32): the same walk in every run
  let seed = 41
  const random = (): number => {
    seed = (seed + 0x6D2B79F5) | 0
    let x = Math.imul(seed ^ (seed >>> 15), 1 | seed)
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296
  }
  const pick = <T>(list: T[]): T => list[Math.floor(random() * list.length)]
  const numbers = ['1555', '1556', '1557', '1558']
  const lids = ['71@lid', '72@lid', '73@lid', '74@lid']
  const who = (): string => pick([...numbers, ...lids])
  let n = 0
  for (let step = 0; step < 200; step++) {
    const kind = pick(['views', 'views', 'react', 'reply', 'map', 'mapInteractions'])
    n++
    if (kind === 'views') {
      const views = Array.from({ length: 1 + Math.floor(random() * 5) }, () => view(pick(messages), who(), Math.floor(random() * 1000), random() > 0.2))
      await store.commitReceipts({ views, deliveries: [] }, quiet)
    } else if (kind === 'react') {
      const w = who()
      await store.recordReaction('s1', { number: numberOf(w), jid: jidOf(w), statusMessageId: pick(messages), messageId: `R${n}`, emoji: pick(['', '👍', '🔥']), at: Math.floor(random() * 1000) })
    } else if (kind === 'reply') {
      const w = who()
      await store.recordReply('s1', { number: numberOf(w), jid: jidOf(w), statusMessageId: pick(messages), messageId: `P${Math.floor(random() * 40)}`, text: 'x', at: n })
    } else if (kind === 'map') {
      await store.mapLids('s1', [{ lid: pick(lids), number: pick(numbers) }], quiet)
    } else {
      await store.mapInteractionLids('s1', [{ lid: pick(lids), number: pick(numbers) }])
    }
    assert.deepEqual(await kept(handle), await recount(handle), `step ${step} (${kind})`)
  }
  const totals = Object.values(await kept(handle)).reduce((s, [v, r, p]) => s + v + r + p, 0)
  assert.ok(totals > 20, `the walk counted something: ${totals}`)
})

dialectTest('kept counts: the migration fills the columns from the rows already there', async (t, dialect) => {
  const handle = await openTestDb(t, dialect)
  const store = storesFor(handle).viewers
  const migrator = new Migrator({ db: handle.db, provider: migrationProvider })
  // back to before migration 019, rows written without the columns, then 019 again
  const down = await migrator.migrateTo('018-list-counts')
  assert.equal(down.error, undefined)
  assert.deepEqual(down.results?.at(-1), { migrationName: '019-kept-counts', direction: 'Down', status: 'Success' })
  await session(handle, 's1')
  const a = await status(handle, 's1', 'A')
  const b = await status(handle, 's1', 'B')
  await store.commitReceipts({ views: [view('A', '1555', 1), view('A', '1556', 1), view('A', '1557', 1, false), view('B', '1555', 1)], deliveries: [] }, quiet)
  await store.recordReaction('s1', { number: '1555', jid: jidOf('1555'), statusMessageId: 'A', messageId: 'R1', emoji: '👍', at: 1 })
  await store.recordReaction('s1', { number: '1556', jid: jidOf('1556'), statusMessageId: 'A', messageId: 'R2', emoji: '', at: 1 })
  await store.recordReply('s1', { number: '1556', jid: jidOf('1556'), statusMessageId: 'B', messageId: 'P1', text: 'x', at: 1 })
  const up = await migrator.migrateToLatest()
  assert.equal(up.error, undefined)
  assert.deepEqual(await kept(handle), { [a]: [2, 1, 0], [b]: [1, 0, 1] })
  // and kept from then on
  await store.commitReceipts({ views: [view('B', '1557', 2)], deliveries: [] }, quiet)
  assert.deepEqual(await kept(handle), { [a]: [2, 1, 0], [b]: [2, 0, 1] })
})
