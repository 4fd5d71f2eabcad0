import { test } from 'node:test'
import { usePostgres } from '../support/db-matrix.js'
import { expiryKills } from './insights-expiry.js'

// insights-expiry-sigkill.test.ts on PostgreSQL (DATABASE_URL): every status keeps its row or its summary
// through SIGKILLs at spread moments of an expiry. Fewer statuses per expiry than on SQLite: on PostgreSQL
// each summary is two statements' round trips, and the kills are spread over the time the expiry takes.

usePostgres()

test('SIGKILL during expiry: every status keeps its row or its summary, never neither, counted once [postgres]', { timeout: 170_000 }, async (t) => {
  await expiryKills(t, 'postgres', { perRound: 60, rounds: 3, atCommit: false })
})
