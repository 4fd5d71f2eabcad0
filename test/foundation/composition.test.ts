import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readdirSync, readFileSync, rmSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import Fastify from 'fastify'
import fp from 'fastify-plugin'
import { tsFiles } from '../support/imports.js'
import { BEFORE_CONCERNS, CONCERNS, EXTERNAL } from '../../src/app.js'
import configPlugin from '../../plugins/config/index.js'
import requestIdPlugin from '../../plugins/request-id/index.js'
import { testConfig } from '../helper.js'
import { ErrorEnvelopeSchema } from '../../schemas/envelope.js'
import { inDependencyOrder, pluginMeta } from '../../src/plugin-order.js'

// How the plugins compose (docs/development.md, "The shape of the service"):
// - a plugin uses another plugin's decorator only when it names that plugin in its `dependencies` (or
//   registers it itself), so the order fastify-plugin checks, and the close order, follow what is used
//   (read statically below, over each plugin's source; and at run time: each plugin gets ready with only the
//   plugins its declared dependencies reach registered)
// - src/app.ts keeps the plugins as a set; the order comes from their `dependencies` (src/plugin-order.ts)
// - no plugin asks whether a decorator exists (`hasDecorator`): what it needs, it declares
// - src/app.ts registers no routes file: each concern's index.ts registers its own

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..')

/** plugins not yet the index.ts of a folder named as they are, each with what removes it */
const NOT_IN_OWN_FOLDER: Record<string, string> = {}

/** uses still outside the graph, each with what removes it */
const KNOWN: Record<string, string> = {}

interface Plugin { file: string, name: string, dependencies: string[], /** its source: from the end of the file's previous plugin */ body: string }

const PLUGIN_META = /\}, \{ name: '([^']+)'(?:, dependencies: \[([^\]]*)\])? \}\)/g

/** the fastify-plugin plugins a file defines */
export function pluginsIn (file: string, source: string): Plugin[] {
  let from = 0
  // without imports and comments, where a name may appear without being used
  const code = source.replace(/^(import|export) .* from '.*$/gm, '').replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '')
  return [...code.matchAll(PLUGIN_META)].map((m) => {
    const body = code.slice(from, m.index)
    from = m.index + m[0].length
    return { file, name: m[1], dependencies: [...(m[2] ?? '').matchAll(/'([^']+)'/g)].map((d) => d[1]), body }
  })
}

/** the decorators a file declares on FastifyInstance */
export function declaredDecorators (source: string): string[] {
  const out: string[] = []
  for (const block of source.matchAll(/interface FastifyInstance \{([\s\S]*?)\n {2}\}/g)) {
    for (const m of block[1].matchAll(/^ {4}(\w+)\??\s*[:(<]/gm)) out.push(m[1])
  }
  return out
}

/** the decorators of the app a file reads (`app.x`, `fastify.x`, `const { x } = app`) */
export function usedDecorators (source: string): Set<string> {
  const used = new Set<string>()
  for (const m of source.matchAll(/\b(?:app|fastify|instance)\.(\w+)/g)) used.add(m[1])
  for (const m of source.matchAll(/const \{([^}]*)\} = app\b/g)) {
    for (const part of m[1].split(',')) used.add(part.split(':')[0].trim())
  }
  return used
}

/** the names a file gives what it imports (not only types) from another file of its folder */
function importedNames (source: string, file: string): string[] {
  const base = file.split('/').pop()?.replace(/\.ts$/, '') ?? ''
  const m = new RegExp(`^import (?!type )(.*) from '\\./${base}\\.js'`, 'm').exec(source)
  if (m === null) return []
  return m[1].replace(/[{}]/g, ' ').split(/[\s,]+/).filter((n) => n !== '' && n !== 'as' && n !== 'type')
}

/** the files of plugins/ a file imports from its own folder */
function localImports (file: string, source: string): string[] {
  return [...source.matchAll(/from '(\.\/[^']+)\.js'/g)].map((m) => join(dirname(file), `${m[1]}.ts`))
}

function readAll (): Map<string, string> {
  return new Map(tsFiles('plugins').map((f) => [f, readFileSync(join(ROOT, f), 'utf8')]))
}

/** the reads of a decorator whose plugin the reader does not declare, in `sources` (file → source), as "file: message" and as edges */
export function undeclaredReads (sources: Map<string, string>): Array<{ edge: string, problem: string }> {
  const owner = new Map<string, string>()
  const plugins: Plugin[] = []
  for (const [file, source] of sources) {
    const defined = pluginsIn(file, source)
    plugins.push(...defined)
    for (const d of declaredDecorators(source)) {
      const by = defined.find((p) => new RegExp(`decorate(<[^>]*>)?\\('${d}'`).test(p.body)) ?? defined[0]
      if (by !== undefined) owner.set(d, by.name)
    }
  }
  const found: Array<{ edge: string, problem: string }> = []
  for (const p of plugins) {
    const source = sources.get(p.file) ?? ''
    const helpers = localImports(p.file, source).filter((f) => sources.has(f) && importedNames(source, f).some((n) => new RegExp(`\\b${n}\\b`).test(p.body)))
    // plugins this one registers itself count as its own
    const own = new Set([p.name, ...helpers.flatMap((f) => pluginsIn(f, sources.get(f) ?? '').map((q) => q.name))])
    const readers = [p.body, ...helpers.filter((f) => pluginsIn(f, sources.get(f) ?? '').length === 0).map((f) => sources.get(f) ?? '')]
    for (const reader of readers) {
      for (const d of usedDecorators(reader)) {
        const from = owner.get(d)
        if (from === undefined || own.has(from) || p.dependencies.includes(from)) continue
        found.push({ edge: `${p.name} → ${from}`, problem: `${relative('.', p.file)}: ${p.name} reads app.${d} of ${from} without declaring it` })
      }
    }
  }
  return found
}

test('every plugin declares the plugins whose decorators it (or a file of its folder it uses) reads', () => {
  const sources = readAll()
  const found = undeclaredReads(sources)
  const problems = found.filter((f) => !(f.edge in KNOWN)).map((f) => f.problem)
  assert.deepEqual([...new Set(problems)], [])
  const known = new Set(found.map((f) => f.edge))
  assert.deepEqual(Object.keys(KNOWN).filter((k) => !known.has(k)), [], 'these no longer happen: remove them from KNOWN')
})

test('the check above fails on a plugin reading a decorator it does not declare', () => {
  const provider = "declare module 'fastify' {\n  interface FastifyInstance {\n    clock: () => number\n  }\n}\n\nexport default fp(async (app) => {\n  app.decorate('clock', Date.now)\n}, { name: 'clock', dependencies: ['config'] })\n"
  const reader = (deps: string) => `export default fp(async (app) => {\n  app.decorate('late', () => app.clock() + 1)\n}, { name: 'late', dependencies: [${deps}] })\n`
  const fixture = (deps: string) => new Map([['plugins/clock/index.ts', provider], ['plugins/late/index.ts', reader(deps)]])
  assert.deepEqual(undeclaredReads(fixture("'config'")).map((f) => f.problem), ['plugins/late/index.ts: late reads app.clock of clock without declaring it'])
  assert.deepEqual(undeclaredReads(fixture("'config', 'clock'")), [])
  // a helper file of the plugin's folder that reads it counts as the plugin's read
  const viaHelper = new Map([...fixture("'config'"), ['plugins/late/index.ts', "import { later } from './later.js'\nexport default fp(async (app) => {\n  app.decorate('late', later(app))\n}, { name: 'late' })\n"], ['plugins/late/later.ts', 'export const later = (app) => () => app.clock() + 1\n']])
  assert.deepEqual(undeclaredReads(viaHelper).map((f) => f.edge), ['late → clock'])
})

test('the rule above can fail: an undeclared read is found', () => {
  const source = "export default fp(async (app) => {\n  app.decorate('x', app.platform.snapshot)\n}, { name: 'x', dependencies: ['db'] })\n"
  const [p] = pluginsIn('plugins/x/index.ts', source)
  assert.equal(p.name, 'x')
  assert.deepEqual(p.dependencies, ['db'])
  assert.ok(usedDecorators(source).has('platform'))
  assert.deepEqual(declaredDecorators("declare module 'fastify' {\n  interface FastifyInstance {\n    /** doc */\n    platform: Platform\n    ready?: () => void\n  }\n}\n"), ['platform', 'ready'])
})

test('no plugin asks hasDecorator: what a plugin needs, it declares', () => {
  const found = [...readAll()].filter(([, source]) => /\bhasDecorator\(/.test(source)).map(([file]) => file)
  assert.deepEqual(found, [])
})

test('src/app.ts registers the concerns, not their routes', () => {
  const app = readFileSync(join(ROOT, 'src', 'app.ts'), 'utf8')
  assert.deepEqual([...app.matchAll(/from '([^']*(?:routes|report-routes))\.js'/g)].map((m) => m[1]), [])
  for (const m of app.matchAll(/from '\.\.\/plugins\/(\w[\w-]*)\/index\.js'/g)) {
    const source = readFileSync(join(ROOT, 'plugins', m[1], 'index.ts'), 'utf8')
    const routes = readdirSync(join(ROOT, 'plugins', m[1])).filter((f) => /routes\.ts$/.test(f))
    for (const r of routes) assert.match(source, new RegExp(`from '\\./${r.replace('.ts', '')}\\.js'`), `plugins/${m[1]}/index.ts registers ${r}`)
  }
})

// src/app.ts's CONCERNS is a set: the order comes from the plugins' declared dependencies (src/plugin-order.ts)
const named = (name: string, dependencies?: string[]) => fp(async () => {}, dependencies === undefined ? { name } : { name, dependencies })
const names = (plugins: unknown[]) => plugins.map((p) => pluginMeta(p).name)

test('the plugins register in an order their dependencies decide, wherever they sit in the set', () => {
  const order = names(inDependencyOrder(CONCERNS, BEFORE_CONCERNS))
  for (const plugin of CONCERNS) {
    const { name, dependencies } = pluginMeta(plugin)
    for (const d of dependencies) {
      if (!BEFORE_CONCERNS.includes(d)) assert.ok(order.indexOf(d) < order.indexOf(name), `${d} before ${name}`)
    }
  }
  assert.deepEqual(names(inDependencyOrder([...CONCERNS].reverse(), BEFORE_CONCERNS)), order, 'the same order from the set reversed')
  assert.deepEqual(names(inDependencyOrder([named('c', ['a']), named('b'), named('a')])), ['a', 'b', 'c'])
})

test('the order is refused, naming the plugins, on a cycle, a dependency nobody provides or a name used twice', () => {
  assert.throws(() => inDependencyOrder([named('a', ['b']), named('b', ['c']), named('c', ['b']), named('d')]), /cycle: b → c → b/)
  assert.throws(() => inDependencyOrder([named('a', ['config', 'nope'])], ['config']), /plugin 'a' depends on 'nope', which no plugin provides/)
  assert.throws(() => inDependencyOrder([named('a'), named('a')]), /two plugins are named 'a'/)
  assert.throws(() => inDependencyOrder([async () => {}]), /without a name/)
})

/** a plugin and every plugin of `all` it needs, through their declared dependencies */
function withDependencies<P> (plugin: P, all: Iterable<P>): P[] {
  const byName = new Map([...all].map((p) => [pluginMeta(p).name, p]))
  const out = new Map<string, P>()
  const add = (p: P): void => {
    const { name, dependencies } = pluginMeta(p)
    if (out.has(name)) return
    out.set(name, p)
    for (const d of dependencies) { const q = byName.get(d); if (q !== undefined) add(q) }
  }
  add(plugin)
  return [...out.values()]
}

test('each plugin gets ready with only the plugins it declares (and theirs) registered', async (t) => {
  const { config, dir } = testConfig()
  t.after(() => { rmSync(dir, { recursive: true, force: true }) })
  const failed: string[] = []
  for (const plugin of CONCERNS) {
    const app = Fastify({ logger: false })
    try {
      app.addSchema(ErrorEnvelopeSchema)
      await app.register(configPlugin, { config })
      await app.register(requestIdPlugin)
      for (const external of EXTERNAL) await app.register(external)
      for (const p of inDependencyOrder(withDependencies(plugin, CONCERNS), BEFORE_CONCERNS)) await app.register(p)
      await app.ready()
    } catch (err) {
      failed.push(`${pluginMeta(plugin).name}: ${(err as Error).message}`)
    } finally {
      await app.close().catch(() => {})
    }
  }
  assert.deepEqual(failed, [])
})

test('the check above fails on a plugin reading at registration a decorator it does not declare', async () => {
  const clock = fp(async (app) => { app.decorate('clock', () => 1) }, { name: 'clock' })
  const late = (dependencies: string[]) => fp(async (app) => { (app as unknown as { clock: () => number }).clock() }, { name: 'late', dependencies })
  const ready = async (plugins: unknown[]): Promise<void> => {
    const app = Fastify({ logger: false })
    try {
      for (const p of inDependencyOrder(plugins)) await app.register(p as ReturnType<typeof fp>)
      await app.ready()
    } finally { await app.close() }
  }
  await assert.rejects(ready(withDependencies(late([]), [clock, late([])])), /clock is not a function/)
  await ready(withDependencies(late(['clock']), [clock, late(['clock'])]))
})

// One plugin per folder, the folder named as the plugin: `plugins/<name>/index.ts` is the plugin `<name>`, and
// no other file of plugins/ calls fastify-plugin (a folder's other files are its routes, services and helpers).

/** the files of `sources` (path → source) that break the rule, as "path: problem" */
export function pluginFolderProblems (sources: Map<string, string>): string[] {
  const problems: string[] = []
  for (const [file, source] of sources) {
    const code = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '')
    const callsFp = /from 'fastify-plugin'/.test(code) || /\bfp\(/.test(code)
    const names = pluginsIn(file, source).map((p) => p.name)
    const parts = file.split('/')
    const folder = parts.length === 3 && parts[0] === 'plugins' ? parts[1] : undefined
    if (parts[parts.length - 1] !== 'index.ts' || folder === undefined) {
      if (callsFp || names.length > 0) problems.push(`${file}: a plugin (${names.join(', ') || 'fastify-plugin'}) outside the index.ts of its own folder`)
      continue
    }
    if (!callsFp && names.length === 0) continue
    if (names.length !== 1 || names[0] !== folder) problems.push(`${file}: plugins ${JSON.stringify(names)}, expected the one plugin '${folder}'`)
  }
  return problems
}

test('every fastify-plugin under plugins/ is the index.ts of a folder named as the plugin', () => {
  const problems = pluginFolderProblems(readAll())
  const fileOf = (problem: string) => problem.slice(0, problem.indexOf(':'))
  assert.deepEqual(problems.filter((p) => !(fileOf(p) in NOT_IN_OWN_FOLDER)), [])
  const seen = new Set(problems.map(fileOf))
  assert.deepEqual(Object.keys(NOT_IN_OWN_FOLDER).filter((f) => !seen.has(f)), [], 'these now keep the rule: remove them from NOT_IN_OWN_FOLDER')
})

test('the rule above can fail: two plugins in a folder, a plugin named apart from its folder, fp in a helper', () => {
  const plugin = (name: string) => `import fp from 'fastify-plugin'\nexport default fp(async () => {}, { name: '${name}', dependencies: ['db'] })\n`
  assert.deepEqual(pluginFolderProblems(new Map([
    ['plugins/clock/index.ts', plugin('clock')],
    ['plugins/clock/helper.ts', 'export const tick = () => 1\n'],
    ['plugins/late/index.ts', plugin('late') + plugin('later').replace(/^import.*\n/, '')],
    ['plugins/tick/index.ts', plugin('tock')],
    ['plugins/tick/extra.ts', plugin('extra')],
    ['plugins/tick/wrap.ts', "import fp from 'fastify-plugin'\nexport const wrap = (f) => fp(f)\n"]
  ])), [
    "plugins/late/index.ts: plugins [\"late\",\"later\"], expected the one plugin 'late'",
    "plugins/tick/index.ts: plugins [\"tock\"], expected the one plugin 'tick'",
    'plugins/tick/extra.ts: a plugin (extra) outside the index.ts of its own folder',
    'plugins/tick/wrap.ts: a plugin (fastify-plugin) outside the index.ts of its own folder'
  ])
})
