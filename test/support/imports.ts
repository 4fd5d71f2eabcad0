import { readdirSync, statSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

// The imports of a source file, read with regular expressions (no compiler), and the repository's
// TypeScript files: the layout tests check the direction of imports with them (test/foundation/layout*.test.ts,
// composition.test.ts).

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..')

/** every .ts file under `dir` (relative to the repository), as paths relative to the repository */
export function tsFiles (dir: string): string[] {
  const out: string[] = []
  for (const entry of readdirSync(join(REPO, dir))) {
    const rel = join(dir, entry)
    if (statSync(join(REPO, rel)).isDirectory()) out.push(...tsFiles(rel))
    else if (rel.endsWith('.ts')) out.push(rel)
  }
  return out
}

export interface Import { spec: string, typeOnly: boolean, line: number }

/** every static and dynamic import (and re-export) of a file, with whether it is type-only */
export function importsOf (source: string): Import[] {
  const found: Import[] = []
  const lineAt = (index: number) => source.slice(0, index).split('\n').length
  for (const m of source.matchAll(/^\s*(import|export)\s+(type\s+)?[^'";]*?\bfrom\s+['"]([^'"]+)['"]/gm)) {
    found.push({ spec: m[3], typeOnly: m[2] !== undefined, line: lineAt(m.index) })
  }
  for (const m of source.matchAll(/^\s*import\s+['"]([^'"]+)['"]/gm)) found.push({ spec: m[1], typeOnly: false, line: lineAt(m.index) })
  for (const m of source.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g)) found.push({ spec: m[1], typeOnly: false, line: lineAt(m.index) })
  return found
}
