import { createRequire } from 'node:module'
import type BetterSqlite3 from 'better-sqlite3'

const require = createRequire(import.meta.url)

/**
 * better-sqlite3 for the Node that runs us. 12.x wraps its objects in node::ObjectWrap, whose
 * destructor aborts the process on Node 24.19 and later when the GC collects a statement
 * (`Assertion failed: (env) != nullptr` in RemoveEnvironmentCleanupHook). 13.x uses node-addon-api and
 * does not, but needs N-API 10 (Node 22.14+), so it cannot load on Node 20. Both are installed: 12 as
 * `better-sqlite3`, 13 as the optional dependency `better-sqlite3-napi` (npm skips it on Node 20, where
 * its engines do not match). The API is the same, so the types are 12's.
 */
function load (): { SQLite: typeof BetterSqlite3, version: string } {
  if (Number(process.versions.napi ?? 0) >= 10) {
    try {
      return { SQLite: require('better-sqlite3-napi'), version: (require('better-sqlite3-napi/package.json') as { version: string }).version }
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'MODULE_NOT_FOUND') throw err
      process.emitWarning('better-sqlite3 13 (optional dependency better-sqlite3-napi) is not installed; better-sqlite3 12 can abort the process on Node 24.19 and later. Reinstall without --omit=optional.')
    }
  }
  return { SQLite: require('better-sqlite3'), version: (require('better-sqlite3/package.json') as { version: string }).version }
}

const loaded = load()

/** The better-sqlite3 Database constructor (13.x where N-API 10 exists, else 12.x). */
export const SQLite: typeof BetterSqlite3 = loaded.SQLite
/** Version of the better-sqlite3 in use. */
export const SQLITE_DRIVER_VERSION: string = loaded.version
