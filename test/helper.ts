import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TestContext } from 'node:test'
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify'
import { buildApp } from '../src/app.js'
import { loadConfig, type Config } from '../src/config.js'
import type { DbHandle } from '../src/db/connection.js'
import type { Platform } from '../src/platform/platform.js'
import type { Database as SQLiteDatabase } from 'better-sqlite3'
import { API_KEY, NO_PLATFORM } from './support/service.js'
import { seedMigratedSqlite } from './support/db-matrix.js'

/** the kit's one key: the app built here and a service spawned by test/support/service.ts take the same */
export const TEST_API_KEY = API_KEY

export interface TestApp {
  app: FastifyInstance
  config: Config
  dir: string
  /** inject with the API key header already set */
  api: (opts: InjectOptions) => Promise<LightMyRequestResponse>
  /** listen on 127.0.0.1 with a free port and return the base URL */
  listen: () => Promise<string>
}

/**
 * SPEED_TRICKS_OFF from the test process's environment (test/foundation/speed-tricks-off.test.ts runs test
 * files again with every speed trick off); a test's own settings still win.
 */
const TRICKS_OFF: Record<string, string> = process.env.SPEED_TRICKS_OFF !== undefined ? { SPEED_TRICKS_OFF: process.env.SPEED_TRICKS_OFF } : {}

/** Settings for a test app: a fresh temporary data and upload folder, quiet logs, the test key. */
export function testConfig (env: Record<string, string> = {}): { config: Config, dir: string } {
  const dir = mkdtempSync(join(tmpdir(), 'status-tracker-test-'))
  const config = loadConfig({
    API_KEY: TEST_API_KEY,
    DATA_DIR: join(dir, 'data'),
    UPLOAD_DIR: join(dir, 'uploads'),
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    WA_WEBSOCKET_URL: NO_PLATFORM,
    ...TRICKS_OFF,
    ...env
  }, { envFile: false })
  return { config, dir }
}

/**
 * Builds the same app as production, over a temporary folder that is removed after the test.
 * `logStream`: the app's log lines (JSON) go there instead of stdout, at the config's LOG_LEVEL.
 * `platform`: a stand-in for the platform (buildApp's option), for a test that must not load Baileys.
 */
export async function build (
  t: TestContext, env: Record<string, string> = {}, opts: { keepDir?: string, logStream?: { write: (line: string) => void }, platform?: Platform } = {}
): Promise<TestApp> {
  let config: Config
  let dir: string
  if (opts.keepDir !== undefined) {
    dir = opts.keepDir
    config = loadConfig({ API_KEY: TEST_API_KEY, DATA_DIR: join(dir, 'data'), UPLOAD_DIR: join(dir, 'uploads'), LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent', WA_WEBSOCKET_URL: NO_PLATFORM, ...TRICKS_OFF, ...env }, { envFile: false })
  } else {
    ({ config, dir } = testConfig(env))
    t.after(() => { rmSync(dir, { recursive: true, force: true }) })
  }
  // a fresh folder on SQLite starts from a migrated copy (db-matrix.ts): the migrations are tested where they are the subject
  if (opts.keepDir === undefined && config.databaseUrl === null) await seedMigratedSqlite(config.databaseFile)
  const logging = opts.logStream !== undefined ? { logger: { level: config.logLevel, stream: opts.logStream } } : {}
  const app = await buildApp(config, logging, opts.platform !== undefined ? { platform: opts.platform } : {})
  t.after(async () => { await app.close() })
  await app.ready()
  return {
    app,
    config,
    dir,
    api: async (o) => await app.inject({ ...o, headers: { 'x-api-key': TEST_API_KEY, ...o.headers } }),
    listen: async () => {
      await app.listen({ port: 0, host: '127.0.0.1' })
      const address = app.server.address()
      if (address === null || typeof address === 'string') throw new Error('no address')
      return `http://127.0.0.1:${address.port}`
    }
  }
}

// the kit's waiting and ports, re-exported for the many tests that import them from here
export { waitFor } from './support/wait.js'
export { freePort } from './support/ports.js'

/** The raw better-sqlite3 connection of an app on the default database (throws on PostgreSQL). */
export function sqliteOf (handle: DbHandle): SQLiteDatabase {
  if (handle.dialect !== 'sqlite') throw new Error('this test reads the SQLite file directly')
  return handle.sqlite
}
