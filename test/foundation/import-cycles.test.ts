import { test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { importsOf, tsFiles } from '../support/imports.js'

// No import cycle in src/, plugins/, schemas/, emulator/src/ or public/*.js, type-only imports included
// (docs/architecture.md): two files that need each other are one idea split in two, or share a third thing that
// belongs in a file of its own (a type both use goes where both can import it). Nor between plugin FOLDERS: a
// plugin is one concern, so when plugins/a imports plugins/b, nothing of plugins/b imports plugins/a (what both
// need goes in src/ or schemas/, as src/api-shapes.ts does for the sent-status shapes).

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..')

/** file → the files of the repository it imports (relative imports only: a package is never part of a cycle here) */
export function importGraph (sources: Map<string, string>): Map<string, string[]> {
  const graph = new Map<string, string[]>()
  for (const [file, source] of sources) {
    const targets = importsOf(source)
      .filter((imp) => imp.spec.startsWith('.'))
      .map((imp) => relative(ROOT, resolve(ROOT, dirname(file), imp.spec)))
      // a TypeScript file is imported by its .js name; a plain ES module (public/) by its own
      .map((target) => sources.has(target) ? target : target.replace(/\.js$/, '.ts'))
      .filter((target) => sources.has(target))
    graph.set(file, [...new Set(targets)])
  }
  return graph
}

/** the import graph between plugin folders: plugins/<name> → the other plugin folders its files import */
export function folderGraph (files: Map<string, string[]>): Map<string, string[]> {
  const folderOf = (file: string): string | null => {
    const parts = file.split('/')
    return parts[0] === 'plugins' && parts.length > 2 ? `plugins/${parts[1]}` : null
  }
  const graph = new Map<string, string[]>()
  for (const [file, targets] of files) {
    const from = folderOf(file)
    if (from === null) continue
    const to = targets.map(folderOf).filter((f): f is string => f !== null && f !== from)
    graph.set(from, [...new Set([...(graph.get(from) ?? []), ...to])])
  }
  return graph
}

/** the files to check: src/, plugins/, schemas/ and emulator/src/ (.ts), and the dashboard's modules (public/*.js) */
function checkedSources (): Map<string, string> {
  const files = [...tsFiles('src'), ...tsFiles('plugins'), ...tsFiles('schemas'), ...tsFiles('emulator/src'),
    ...readdirSync(join(ROOT, 'public')).filter((f) => f.endsWith('.js')).map((f) => `public/${f}`)]
  return new Map(files.map((f) => [f, readFileSync(join(ROOT, f), 'utf8')]))
}

/** each group as one line: a cycle, and the group's other members (breaking that cycle may leave another among them) */
function described (graph: Map<string, string[]>): string[] {
  return groupsOf(graph).map((group) => {
    const cycle = cycleIn(new Set(group), graph)
    const others = group.filter((f) => !cycle.includes(f))
    return cycle.join(' → ') + (others.length > 0 ? ` (in a group with ${others.join(', ')})` : '')
  })
}

/** one cycle per strongly connected group of files (Tarjan), each as a path that ends where it starts */
export function cyclesOf (graph: Map<string, string[]>): string[][] {
  return groupsOf(graph).map((group) => cycleIn(new Set(group), graph))
}

/** the strongly connected groups of files: those that reach each other through imports */
export function groupsOf (graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const groups: string[][] = []
  const visit = (v: string): void => {
    index.set(v, index.size)
    low.set(v, index.get(v) as number)
    stack.push(v)
    onStack.add(v)
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w)
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number))
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v) as number, index.get(w) as number))
    }
    if (low.get(v) === index.get(v)) {
      const group: string[] = []
      let w: string
      do {
        w = stack.pop() as string
        onStack.delete(w)
        group.push(w)
      } while (w !== v)
      if (group.length > 1 || (graph.get(v) ?? []).includes(v)) groups.push(group)
    }
  }
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v)
  return groups.map((group) => group.sort())
}

/** a shortest cycle through the group's first file (by name), walking only inside the group */
function cycleIn (group: Set<string>, graph: Map<string, string[]>): string[] {
  const start = [...group].sort()[0]
  const from = new Map<string, string>()
  const queue = [start]
  while (queue.length > 0) {
    const v = queue.shift() as string
    for (const w of (graph.get(v) ?? []).filter((x) => group.has(x)).sort()) {
      if (w === start) {
        const path = [v]
        while (path[0] !== start) path.unshift(from.get(path[0]) as string)
        return [...path, start]
      }
      if (!from.has(w)) { from.set(w, v); queue.push(w) }
    }
  }
  return [start]
}

test('no import cycle in src/, plugins/, schemas/, emulator/src/ or public/*.js, type-only imports included', () => {
  const sources = checkedSources()
  assert.ok(sources.has('emulator/src/emulator.ts') && sources.has('public/app.js'), 'the emulator and the dashboard are checked')
  assert.deepEqual(described(importGraph(sources)), [])
})

test('no import cycle between plugin folders', () => {
  assert.deepEqual(described(folderGraph(importGraph(checkedSources()))), [])
})

test('the check above fails on a cycle, type-only or through several files, and names it', () => {
  const sources = new Map([
    ['src/a.ts', "import type { B } from './b.js'\nexport interface A { b: B }\n"],
    ['src/b.ts', "import { c } from './c/c.js'\nexport interface B { n: number }\n"],
    ['src/c/c.ts', "export { a } from '../a.js'\n"],
    ['src/d.ts', "import { a } from './a.js'\nimport { readFileSync } from 'node:fs'\n"]
  ])
  assert.deepEqual(cyclesOf(importGraph(sources)), [['src/a.ts', 'src/b.ts', 'src/c/c.ts', 'src/a.ts']])
  assert.deepEqual(cyclesOf(importGraph(new Map([['src/a.ts', "import './a.js'\n"]]))), [['src/a.ts', 'src/a.ts']])
  sources.set('src/c/c.ts', 'export const a = 1\n')
  assert.deepEqual(cyclesOf(importGraph(sources)), [])
  assert.ok(existsSync(join(ROOT, 'src', 'app.ts')))
})

test('the folder check fails on two plugin folders that import each other, and names them', () => {
  const sources = new Map([
    ['plugins/a/index.ts', "import { b } from '../b/service.js'\nimport { own } from './own.js'\n"],
    ['plugins/a/own.ts', "import { iso } from '../../src/shapes.js'\nexport const own = 1\n"],
    ['plugins/b/service.ts', "import type { A } from '../a/own.js'\nexport const b = 1\n"],
    ['src/shapes.ts', 'export const iso = 1\n']
  ])
  // no file cycle, yet a folder cycle: plugins/a → plugins/b → plugins/a
  assert.deepEqual(cyclesOf(importGraph(sources)), [])
  assert.deepEqual(cyclesOf(folderGraph(importGraph(sources))), [['plugins/a', 'plugins/b', 'plugins/a']])
  // the shared thing moved out of plugins/a: no folder cycle
  sources.set('plugins/b/service.ts', "import { iso } from '../../src/shapes.js'\nexport const b = iso\n")
  assert.deepEqual(cyclesOf(folderGraph(importGraph(sources))), [])
})

test('the file check follows the dashboard\'s .js imports', () => {
  const sources = new Map([
    ['public/a.js', "import { b } from './b.js'\nexport const a = 1\n"],
    ['public/b.js', "import { a } from './a.js'\nexport const b = 2\n"]
  ])
  assert.deepEqual(cyclesOf(importGraph(sources)), [['public/a.js', 'public/b.js', 'public/a.js']])
})
