#!/usr/bin/env node
// Prints the test files `npm test` runs, the longest first: `node --test` starts the files in the order it
// is given them, `--test-concurrency` at a time, so a long file started last makes a tail in which one core
// runs it alone. The files named in LONGEST start first, in that order; every other file follows in
// alphabetical order (most take a few seconds).
//
//   node scripts/test-files.mjs <folder> [folder …]   the *.test.js files under the folders, one a line
//
// LONGEST comes from one whole `npm test` (each file's wall time, session 17 at d34c90e: 1,201 s in the
// runner, the two cores busy throughout): the files over 15 s, the longest first, with the five bench
// files (the heaviest on CPU: each runs benchmark scripts with their own services) alternating with the
// others, so two of them rarely run side by side. Its order need not be exact: a file missing from it only
// starts later; a file named here and gone is skipped, and test/foundation/test-build.test.ts fails on it,
// so the list follows renames.
/* global console, process */
import { readdirSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

/** paths relative to the compiled tree's root (.test-build/), the test sources' own paths with .js */
export const LONGEST = [
  'test/bench/smoke-reads.test.js',
  'test/audiences/saved-many-e2e.test.js',
  'test/bench/smoke-scale.test.js',
  'test/cluster/rebalance.test.js',
  'test/bench/smoke-cluster.test.js',
  'test/cluster/schedules.test.js',
  'test/bench/soak.test.js',
  'test/dashboard/audiences.test.js',
  'test/bench/smoke.test.js',
  'test/cluster/two-nodes.test.js',
  'test/uploads/s3.test.js',
  'test/cluster/forwarding.test.js',
  'test/dashboard/insights.test.js',
  'test/durability/schedules-sigkill.test.js',
  'test/dashboard/keys.test.js',
  'test/statuses/contact-statuses-e2e.test.js',
  'test/dashboard/dashboard.test.js',
  'test/dashboard/schedules.test.js',
  'test/foundation/speed-tricks-off.test.js',
  'test/demo/walkthrough.test.js',
  'test/events/webhook-sigkill.test.js',
  'test/dashboard/contact-statuses.test.js',
  'test/statuses/send-crash.test.js',
  'test/durability/insights-expiry-sigkill-pg.test.js',
  'test/dashboard/health-expiry.test.js',
  'test/durability/receipts-sigkill-pg.test.js',
  'test/dashboard/audio.test.js',
  'test/durability/insights-expiry-sigkill.test.js',
  'test/contacts/e2e.test.js',
  'test/dashboard/reach.test.js',
  'test/audiences/api.test.js',
  'emulator/test/scale.test.js',
  'test/durability/receipts-sigkill.test.js',
  'test/schedules/e2e.test.js',
  'test/db/servers.test.js',
  'test/sessions/paced-start.test.js',
  'test/durability/contact-statuses-sigkill.test.js',
  'test/contacts/api.test.js',
  'test/db/postgres-e2e.test.js',
  'test/cluster/keys-redis.test.js'
]

/** the *.test.js files under `dir`, sorted */
function testFiles (dir) {
  const out = []
  let entries
  try { entries = readdirSync(dir, { withFileTypes: true }) } catch { return out }
  for (const entry of entries) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) out.push(...testFiles(path))
    else if (entry.name.endsWith('.test.js')) out.push(path)
  }
  return out.sort()
}

/** the files under `folders`, those of LONGEST first in its order, then the others alphabetically */
export function ordered (folders) {
  const all = folders.flatMap((folder) => testFiles(folder)).sort()
  const rank = (file) => LONGEST.findIndex((long) => file.endsWith(`/${long}`) || file === long)
  const first = all.filter((f) => rank(f) >= 0).sort((a, b) => rank(a) - rank(b))
  return [...first, ...all.filter((f) => rank(f) < 0)]
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const folders = process.argv.slice(2)
  if (folders.length === 0) {
    console.error('usage: node scripts/test-files.mjs <folder> [folder …]')
    process.exit(2)
  }
  console.log(ordered(folders).join('\n'))
}
