import type { Migration, MigrationProvider } from 'kysely'
import * as m001 from './001-initial.js'
import * as m003 from './003-send-progress.js'

// A static index instead of a file-system provider: src (tsx) and dist (tsc) resolve the same migrations.
const migrations: Record<string, Migration> = {
  '001-initial': m001,
  // 002 (receipts: commit before ack, unmapped LIDs) comes from the receipts branch
  '003-send-progress': m003
}

export const migrationProvider: MigrationProvider = {
  async getMigrations () { return migrations }
}
