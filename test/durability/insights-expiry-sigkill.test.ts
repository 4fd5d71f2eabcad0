import { test } from 'node:test'
import { expiryKills } from './insights-expiry.js'

// Issue 32 on SQLite: a SIGKILL at spread moments of an expiry leaves every status its row or its summary,
// never neither, never both, each counted once by /insights (insights-expiry.ts).

test('SIGKILL during expiry: every status keeps its row or its summary, never neither, counted once [sqlite]', { timeout: 170_000 }, async (t) => {
  await expiryKills(t, 'sqlite', { perRound: 150, rounds: 4, atCommit: true })
})
