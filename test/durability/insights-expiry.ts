import assert from 'node:assert/strict'
import { join } from 'node:path'
import type { TestContext } from 'node:test'
import { sql, type Kysely } from 'kysely'
import { openDatabase, openPostgres, type DbHandle } from '../../src/db/connection.js'
import type { Database } from '../../src/db/database.js'
import { serviceApi } from '../support/clients.js'
import { postgresUrl, type Dialect } from '../support/db-matrix.js'
import { tempDir } from '../support/processes.js'
import { spawnService, type ServiceProc } from '../support/service.js'
import { insertSession } from '../support/sessions.js'
import { sleep, waitFor } from '../support/wait.js'
import { SQLite } from '../../src/db/sqlite/driver.js'

// Issue 32: expiry writes a status's summary in the transaction that deletes it. The service as a real process
// (no platform: the statuses, their viewers, deliveries, reactions and replies are rows this test writes, made
// old so that the next cleanup tick expires them) is SIGKILLed at a different moment of each expiry: once
// right after the rows' commit, then at spread times after the expiry's first write (seen from outside: the
// write lock on SQLite, a transaction id on PostgreSQL) up to after its commit, on SQLite and on PostgreSQL.
// After each kill, for every status ever written: either its row or its summary, never neither, never both;
// each summary with its status's figures; after each restart /insights counts every status once.

const SID = 'expiring'
const OWN = '15557300001'
/** STATUS_TTL_HOURS of the service, in ms */
const TTL_MS = 4000
/** a round's statuses expire this long after the round began to be written */
const MARGIN_MS = 1500
/** the contacts the rows name */
const CONTACTS = Array.from({ length: 40 }, (_, i) => `155573${String(10_000 + i).slice(1)}`)

interface Written { views: number, recipients: number }

/**
 * perRound statuses, each to three contacts (one or two viewed it, one got it, some reacted or replied), in one
 * transaction; posted so that they expire MARGIN_MS from now. Not already expired: rows that are expired when
 * they appear could land between an expiry's read and its delete, which no real status does (they age into it).
 */
async function writeRound (db: Kysely<Database>, round: number, perRound: number): Promise<Map<number, Written>> {
  const begun = Date.now()
  const posted = begun - TTL_MS + MARGIN_MS
  const written = new Map<number, Written>()
  await db.transaction().execute(async (trx) => {
    const rows = Array.from({ length: perRound }, (_, i) => {
      const to = [0, 1, 2].map((k) => CONTACTS[(i + k * 7 + round) % CONTACTS.length])
      return {
        session_id: SID,
        type: 'text' as const,
        content: `round ${round} status ${i}`,
        caption: '',
        message_id: `3EB0R${round}S${i}`,
        state: 'sent' as const,
        created_at: posted,
        contact_count: 3,
        target_numbers: to.join(','),
        sent_count: 3,
        media_file: null,
        background_color: null,
        font: null,
        error: null
      }
    })
    const ids = (await trx.insertInto('statuses').values(rows).returning('id').execute()).map((r) => r.id)
    const viewers = []
    const deliveries = []
    const reactions = []
    const replies = []
    for (const [i, id] of ids.entries()) {
      const [a, b, c] = rows[i].target_numbers.split(',')
      // a views it; b only when i is even; c gets it (a delivery receipt) without viewing
      const viewing = i % 2 === 0 ? [a, b] : [a]
      for (const [k, n] of viewing.entries()) {
        viewers.push({ status_id: id, viewer: n, number: n, jid: `${n}@s.whatsapp.net`, viewed_at: posted + (k + 1) * 60_000 + i, is_real: 1 })
      }
      deliveries.push({ status_id: id, recipient: c, number: c, jid: `${c}@s.whatsapp.net`, delivered_at: posted + 30_000 })
      if (i % 5 === 0) reactions.push({ status_id: id, reactor: a, number: a, jid: `${a}@s.whatsapp.net`, emoji: '👍', reacted_at: posted + 90_000, message_id: `R${round}-${i}` })
      if (i % 7 === 0) {
        replies.push({ status_id: id, message_id: `P${round}-${i}`, replier: a, number: a, jid: `${a}@s.whatsapp.net`, text: 'nice', replied_at: posted + 95_000, received_at: posted + 95_000 })
      }
      written.set(id, { views: viewing.length, recipients: 3 })
    }
    await trx.insertInto('viewers').values(viewers).execute()
    await trx.insertInto('status_deliveries').values(deliveries).execute()
    await trx.insertInto('status_reactions').values(reactions).execute()
    await trx.insertInto('status_replies').values(replies).execute()
  })
  assert.ok(Date.now() < begun + MARGIN_MS, `round ${round} written within ${MARGIN_MS} ms (${Date.now() - begun} ms)`)
  return written
}

/** Every status written: its row XOR its summary, the summary with its figures. */
async function checkEither (handle: DbHandle, all: Map<number, Written>): Promise<{ rows: number, summaries: number }> {
  // both read from one snapshot (an expiry may commit between two reads)
  const read = handle.dialect === 'sqlite' ? handle.db.transaction() : handle.db.transaction().setIsolationLevel('repeatable read')
  const [rows, summaries, perSummary] = await read.execute(async (trx) => [
    new Set((await trx.selectFrom('statuses').select('id').where('session_id', '=', SID).execute()).map((r) => Number(r.id))),
    (await sql<{ status_id: string | number, recipients: number, viewed: number, n: number }>`
      select status_id, recipients, viewed, count(*) over (partition by status_id) as n from insight_statuses where session_id = ${SID}`.execute(trx)).rows,
    Number((await sql<{ n: number }>`
      select count(*) as n from insight_recipients r join insight_statuses s on s.id = r.insight_id where s.session_id = ${SID}`.execute(trx)).rows[0].n)
  ] as const)
  const summarised = new Map(summaries.map((s) => [Number(s.status_id), s]))
  assert.ok(summaries.every((s) => Number(s.n) === 1), 'one summary per status')
  const neither: number[] = []
  const both: number[] = []
  for (const [id, w] of all) {
    const s = summarised.get(id)
    if (rows.has(id) && s !== undefined) both.push(id)
    if (!rows.has(id) && s === undefined) neither.push(id)
    if (s !== undefined) assert.deepEqual([Number(s.recipients), Number(s.viewed)], [w.recipients, w.views], `summary of status ${id}`)
  }
  assert.deepEqual(neither, [], 'statuses with neither row nor summary')
  assert.deepEqual(both, [], 'statuses with both a row and a summary')
  assert.equal(perSummary, summaries.length * 3, 'three recipient lines per summary')
  return { rows: rows.size, summaries: summaries.length }
}

/**
 * Whether another connection holds a write transaction now (the service's expiry, the only writer when no session
 * runs): on SQLite a `BEGIN IMMEDIATE` that would wait fails at once; on PostgreSQL a backend other than ours
 * has a transaction id (it wrote).
 */
function writerProbe (handle: DbHandle): { busy: () => Promise<boolean>, close: () => void } {
  if (handle.dialect === 'sqlite') {
    const probe = new SQLite(handle.file)
    probe.pragma('busy_timeout = 0')
    const begin = probe.prepare('begin immediate')
    const rollback = probe.prepare('rollback')
    return {
      busy: async () => {
        try {
          begin.run()
        } catch (err) {
          if ((err as { code?: string }).code?.startsWith('SQLITE_BUSY') === true) return true
          throw err
        }
        rollback.run()
        return false
      },
      close: () => { probe.close() }
    }
  }
  const { db } = handle
  return {
    busy: async () => {
      const { rows } = await sql<{ n: number }>`select count(*) as n from pg_stat_activity
        where datname = current_database() and pid <> pg_backend_pid() and backend_xid is not null`.execute(db)
      return Number(rows[0].n) > 0
    },
    close: () => {}
  }
}

/**
 * The test on one dialect: one expiry of `perRound` statuses timed, then `rounds` more, each cut by a SIGKILL
 * (`atCommit`: the first right after the rows' commit, before the expiry began; the others spread over the expiry).
 */
export async function expiryKills (
  t: TestContext, dialect: Dialect, { perRound, rounds, atCommit }: { perRound: number, rounds: number, atCommit: boolean }
): Promise<void> {
  const dir = tempDir(`st-insights-kill-${dialect}-`)
  t.after(() => { dir.rm() })
  const url = dialect === 'postgres' ? await postgresUrl() : null
  // the cleanup every 100 ms: a round's rows are expired by the first tick after they are MARGIN_MS old
  const env = { LOG_LEVEL: 'warn', STATUS_TTL_HOURS: String(TTL_MS / 3_600_000), CLEANUP_INTERVAL_MS: '100', ...(url !== null ? { DATABASE_URL: url } : {}) }
  const start = async (): Promise<ServiceProc> => await spawnService({ dir: dir.path, t, env })
  let svc = await start()
  const handle: DbHandle = url !== null ? await openPostgres(url) : await openDatabase(join(svc.dataDir, 'status-tracker.db'))
  t.after(async () => { await handle.close() })
  const { db } = handle
  await insertSession(db, SID, { ownNumber: OWN })

  const all = new Map<number, Written>()
  const add = (m: Map<number, Written>): void => { for (const [k, v] of m) all.set(k, v) }
  const insights = async (): Promise<{ statuses: number, recipients: number, viewed: number }> => {
    const from = new Date(Date.now() - 3 * 86_400_000).toISOString()
    const data = await serviceApi(svc.base).get<{ totals: { statuses: number, recipients: number, viewed: number } }>(`/sessions/${SID}/insights?from=${from}`)
    return { statuses: data.totals.statuses, recipients: data.totals.recipients, viewed: data.totals.viewed }
  }
  const sum = () => ({ statuses: all.size, recipients: all.size * 3, viewed: [...all.values()].reduce((n, w) => n + w.views, 0) })

  // one expiry left alone: how long it holds the write lock (from its first write to its commit)
  const writing = writerProbe(handle)
  t.after(() => { writing.close() })
  add(await writeRound(db, 0, perRound))
  await waitFor(async () => await writing.busy(), 30_000, 'the expiry to begin writing', 2)
  const t0 = performance.now()
  await waitFor(async () => (await checkEither(handle, all)).rows === 0, 60_000, 'the first round to expire', 20)
  const took = performance.now() - t0
  t.diagnostic(`[${dialect}] an expiry of ${perRound} statuses committed ${took.toFixed(0)} ms after its first write`)
  assert.deepEqual(await insights(), sum())

  // then one kill per expiry: maybe the first right after the round's commit (before the expiry began), the
  // others a different time after the expiry's first write, from 0 to twice what it took
  const outcomes: string[] = []
  const restarts: number[] = []
  for (let round = 1; round <= rounds; round++) {
    add(await writeRound(db, round, perRound))
    let when = 'at commit'
    const spread = atCommit ? round - 2 : round - 1
    if (spread >= 0) {
      const delay = Math.round(took * 2 * spread / (atCommit ? rounds - 2 : rounds - 1))
      const seen = await waitFor(async () => await writing.busy(), 5000, 'the expiry to begin writing', 2).then(() => true, () => false)
      await sleep(delay)
      when = seen ? `${delay} ms into the expiry` : 'expiry not seen writing'
    }
    svc.child.kill('SIGKILL')
    await svc.exited
    // PostgreSQL rolls back what the dead connection left open once it notices
    if (dialect === 'postgres') await waitFor(async () => !(await writing.busy()), 10_000, 'the cut transaction rolled back', 20)
    const seen = await checkEither(handle, all)
    outcomes.push(`${when}: ${seen.rows === 0 ? 'summarised' : `${seen.rows} rows kept`}`)
    svc = await start()
    restarts.push(svc.readyMs)
    // each status counted once, live or summarised; then the cleanup takes what the kill left
    assert.deepEqual(await insights(), sum(), `after the kill ${when} (round ${round})`)
    await waitFor(async () => (await checkEither(handle, all)).rows === 0, 60_000, 'what the kill left to expire', 50)
  }
  t.diagnostic(`[${dialect}] kills: ${outcomes.join('; ')}`)
  t.diagnostic(`[${dialect}] restarts ready in ${restarts.map((ms) => ms.toFixed(0)).join(', ')} ms (each ran the cleanup at start)`)
  const last = await checkEither(handle, all)
  assert.deepEqual(last, { rows: 0, summaries: (rounds + 1) * perRound })
  for (const table of ['viewers', 'status_deliveries', 'status_reactions', 'status_replies'] as const) {
    const { rows } = await sql<{ n: number }>`select count(*) as n from ${sql.table(table)}`.execute(db)
    assert.equal(Number(rows[0].n), 0, `no ${table} row left`)
  }
}
