import assert from 'node:assert/strict'
import { storesOf } from '../../src/db/stores/index.js'
import { test } from 'node:test'
import { openPostgres, type DbHandle } from '../../src/db/connection.js'
import type { NewDelivery } from '../../src/db/stores/webhooks.js'
import { dialectTest, openTestDb, postgresUrl } from '../support/db-matrix.js'

// The webhook outbox on both dialects: due order, one order key at a time, attempts, release, requeue,
// prune; on PostgreSQL several nodes claim from one outbox without ever claiming a row twice, and a
// node's claim holds until its outcome, its restart, or its time runs out.

async function endpoint (handle: DbHandle, id: string): Promise<void> {
  await storesOf(handle).webhooks.insert({
    id, url: `http://127.0.0.1/${id}`, events: null, sessionId: null, description: null, secret: 'whsec_x', enabled: true,
    disabledReason: null, createdAt: 1, updatedAt: 1, keyId: null
  })
}

const delivery = (webhookId: string, orderKey: string, at: number, n: number): NewDelivery =>
  ({ webhookId, messageId: `msg_${n}`, eventType: 'status-sent', sessionId: 's1', orderKey, body: `{"n":${n}}`, at })

dialectTest('outbox: due order, one order key at a time, attempts, release, requeue and prune', async (t, dialect) => {
  const handle = await openTestDb(t, dialect)
  await endpoint(handle, 'wh_a')
  const outbox = storesOf(handle).webhooks.outbox({ nodeId: 'node-a', ttlMs: 60_000 })
  assert.deepEqual(await outbox.subscribers(), [{ id: 'wh_a', events: null, sessionId: null, keyId: null, enabled: true, updatedAt: 1 }])
  await outbox.insert([delivery('wh_a', 'k1', 100, 1), delivery('wh_a', 'k1', 100, 2), delivery('wh_a', 'k2', 150, 3)])
  assert.equal(await outbox.nextDueAt(), 100)
  assert.deepEqual(await outbox.claimDue(99, 10), [], 'nothing due yet')
  const first = await outbox.claimDue(200, 10)
  // k1's second waits for its first
  assert.deepEqual(first.map((r) => [r.messageId, r.url, r.secret]), [['msg_1', 'http://127.0.0.1/wh_a', 'whsec_x'], ['msg_3', 'http://127.0.0.1/wh_a', 'whsec_x']])
  assert.equal(typeof first[0].id, 'number')
  assert.deepEqual(await outbox.claimDue(200, 10), [])
  await outbox.retry({ id: first[0].id, at: 210, statusCode: 500, error: 'HTTP 500' }, 1000)
  await outbox.succeeded({ id: first[1].id, at: 211, statusCode: 200, error: null })
  assert.deepEqual(await outbox.claimDue(300, 10), [], 'msg_2 still waits for msg_1, which waits for its retry')
  assert.equal(await outbox.nextDueAt(), 1000)
  const [again] = await outbox.claimDue(1000, 10)
  assert.deepEqual([again.messageId, again.attempts, again.lastStatusCode], ['msg_1', 1, 500])
  await outbox.failed({ id: again.id, at: 1001, statusCode: 500, error: 'HTTP 500' })
  const [second] = await outbox.claimDue(1001, 10)
  assert.equal(second.messageId, 'msg_2')
  assert.equal(await outbox.releaseAll(), 1, 'a crash left it sending: pending again')
  assert.equal((await outbox.claimDue(1002, 1)).length, 1)
  await outbox.release(second.id)
  assert.equal(await outbox.requeue('wh_a', again.id, 2000), true)
  assert.equal(await outbox.requeue('wh_a', 999_999, 2000), false)
  await outbox.disable('wh_a', 'gone', 2001)
  assert.deepEqual(await outbox.claimDue(5000, 10), [], 'a disabled endpoint gets nothing')
  assert.deepEqual((await outbox.subscribers()).map((r) => [r.id, r.enabled, r.updatedAt]), [['wh_a', false, 2001]], 'a disabled endpoint, with when')
  assert.equal(await outbox.prune(10_000), 3, 'every delivery not being sent')
})

test('outbox on PostgreSQL: three nodes claiming at once never claim a delivery twice, and keep each order key in order', async (t) => {
  const url = await postgresUrl()
  const nodes = await Promise.all([openPostgres(url), openPostgres(url), openPostgres(url)])
  t.after(async () => { await Promise.all(nodes.map(async (n) => { await n.close() })) })
  await endpoint(nodes[0], 'wh_a')
  const outboxes = nodes.map((n, i) => storesOf(n).webhooks.outbox({ nodeId: `node-${i}`, ttlMs: 60_000 }))
  const rows: NewDelivery[] = []
  for (let n = 0; n < 300; n++) rows.push(delivery('wh_a', `k${n % 10}`, 1, n))
  await outboxes[0].insert(rows)

  const sent: string[] = []
  const inFlight = new Set<string>()
  async function work (outbox: (typeof outboxes)[number]): Promise<void> {
    for (let round = 0; round < 400; round++) {
      const claimed = await outbox.claimDue(10, 7)
      if (claimed.length === 0 && sent.length === rows.length) return
      for (const row of claimed) {
        assert.equal(inFlight.has(row.orderKey), false, `two deliveries of ${row.orderKey} out at once`)
        inFlight.add(row.orderKey)
      }
      await new Promise((resolve) => setImmediate(resolve))
      for (const row of claimed) {
        sent.push(row.messageId)
        inFlight.delete(row.orderKey)
        await outbox.succeeded({ id: row.id, at: 11, statusCode: 200, error: null })
      }
    }
  }
  await Promise.all(outboxes.map(work))
  assert.equal(sent.length, rows.length)
  assert.equal(new Set(sent).size, rows.length, 'each delivery sent once')
  for (let k = 0; k < 10; k++) {
    const order = sent.filter((m) => Number(m.slice(4)) % 10 === k).map((m) => Number(m.slice(4)))
    assert.deepEqual(order, [...order].sort((a, b) => a - b), `order key k${k} in order`)
  }
})

test('outbox on PostgreSQL: a starting node puts back only its own claims; a claim that runs out goes to another node, whose outcome counts', async (t) => {
  const url = await postgresUrl()
  const [a, b] = await Promise.all([openPostgres(url), openPostgres(url)])
  t.after(async () => { await Promise.all([a.close(), b.close()]) })
  await endpoint(a, 'wh_a')
  const nodeA = storesOf(a).webhooks.outbox({ nodeId: 'node-a', ttlMs: 1000 })
  const nodeB = storesOf(b).webhooks.outbox({ nodeId: 'node-b', ttlMs: 1000 })
  await nodeA.insert([delivery('wh_a', 'k1', 10, 1), delivery('wh_a', 'k1', 10, 2), delivery('wh_a', 'k2', 10, 3)])
  const held = await nodeA.claimDue(100, 1)
  assert.deepEqual(held.map((r) => r.messageId), ['msg_1'])
  // the claim (who, until when) is the table's business: read there
  const claimOf = async (id: number): Promise<[string | null, number]> => {
    const r = await a.db.selectFrom('webhook_deliveries').select(['claimed_by', 'claimed_until']).where('id', '=', id).executeTakeFirstOrThrow()
    return [r.claimed_by, Number(r.claimed_until)]
  }
  assert.deepEqual(await claimOf(held[0].id), ['node-a', 1100])

  // B starts while A is sending msg_1: it leaves A's claim alone and never sends msg_1 (nor msg_2 behind it)
  assert.equal(await nodeB.releaseAll(), 0)
  const other = await nodeB.claimDue(500, 10)
  assert.deepEqual(other.map((r) => r.messageId), ['msg_3'])
  await nodeB.succeeded({ id: other[0].id, at: 501, statusCode: 200, error: null })
  assert.equal(await nodeB.nextDueAt(), 1100, 'B looks again when A\'s claim would run out')
  // B cannot write an outcome for a delivery A holds
  await nodeB.succeeded({ id: held[0].id, at: 501, statusCode: 200, error: null })
  await nodeB.release(held[0].id)
  assert.deepEqual((await nodeB.claimDue(600, 10)), [])

  // A dies; its claim runs out and B sends msg_1 again; A's late outcome is ignored, B's counts
  const [retaken] = await nodeB.claimDue(1100, 10)
  assert.deepEqual([retaken.messageId, retaken.attempts], ['msg_1', 0])
  assert.equal((await claimOf(retaken.id))[0], 'node-b')
  await nodeA.failed({ id: held[0].id, at: 1101, statusCode: 500, error: 'late' })
  await nodeB.succeeded({ id: retaken.id, at: 1102, statusCode: 200, error: null })
  const row = await a.db.selectFrom('webhook_deliveries').selectAll().where('id', '=', retaken.id).executeTakeFirstOrThrow()
  assert.deepEqual([row.status, row.attempts, row.last_status_code], ['succeeded', 1, 200])

  // A starts again while msg_2 is its claim: it puts back its own
  const [mine] = await nodeA.claimDue(2000, 10)
  assert.equal(mine.messageId, 'msg_2')
  assert.equal(await nodeB.releaseAll(), 0)
  assert.equal(await nodeA.releaseAll(), 1)
  assert.deepEqual((await nodeB.claimDue(2001, 10)).map((r) => r.messageId), ['msg_2'])
})
