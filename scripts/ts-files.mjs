// The .ts sources under a folder, declaration files aside: what scripts/build.mjs (dist/) and
// scripts/test-build.mjs (.test-build/) each transpile. Plain JavaScript: it runs before anything is compiled.
import { readdirSync } from 'node:fs'
import { join } from 'node:path'

/** the .ts files under `folder` (relative to `root`, and returned so), skipping folders named in `skip` */
export function tsFiles (root, folder, skip = new Set(['node_modules'])) {
  const out = []
  let entries
  try { entries = readdirSync(join(root, folder), { withFileTypes: true }) } catch { return out }
  for (const entry of entries) {
    const rel = `${folder}/${entry.name}`
    if (entry.isDirectory()) { if (!skip.has(entry.name)) out.push(...tsFiles(root, rel, skip)) } else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) out.push(rel)
  }
  return out
}
