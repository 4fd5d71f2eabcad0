import { Migrator, type Kysely } from 'kysely'
import type { Database } from './database.js'
import { migrationProvider } from './migrations/index.js'

/** Runs the migrations not yet run (both backends' connections call it once, as they open). */
export async function migrate (db: Kysely<Database>): Promise<void> {
  // numbers are handed out per branch (002 viewer LIDs, 003 sends, 004 webhooks) and merge in any order:
  // a database that already ran a later one still gets an earlier one that arrives after it.
  // On PostgreSQL the migrator takes an advisory lock: nodes starting together migrate one at a time.
  const { error, results } = await new Migrator({ db, provider: migrationProvider, allowUnorderedMigrations: true }).migrateToLatest()
  const failed = results?.find((r) => r.status === 'Error')
  if (error !== undefined || failed !== undefined) {
    await db.destroy()
    const reason = error instanceof Error ? error.message : String(error ?? failed?.migrationName)
    throw new Error(`Database migration failed: ${reason}`)
  }
}
