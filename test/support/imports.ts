// The imports of a source file, read with regular expressions (no compiler): the layout tests check
// the direction of imports with it (test/foundation/layout*.test.ts).

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
