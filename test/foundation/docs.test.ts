import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { basename, dirname, join, posix, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { EnvSchema } from '../../schemas/env.js'
import { EventSchemas } from '../../schemas/events.js'
import { ASSUMPTIONS } from '../../src/platform/baileys/index.js'
import { build } from '../helper.js'

// The docs name everything a user can set, call or hear, each in its one place: every setting of the env
// schema has a row in docs/operations.md's settings tables with its default (and a line in .env.example),
// every route of the OpenAPI document has a line with its method and path in docs/api.md, every socket.io
// event is named in README.md or a page under docs/ (every page there counts, so pages added later count
// too; emulator/README.md as well), and every `npm run X` the docs name is a script of package.json. Every
// relative link of the Markdown files a reader is sent to leads to a file of the repository and, with an
// anchor, to a heading there; no page cites a Markdown file the repository does not hold (a design note or
// an audit kept elsewhere); the health samples show as many Baileys assumptions as the service checks; and every
// error of src/errors.ts is in docs/api.md's status-code table, in the row of its code; and every metric the
// service registers has a row in docs/operations.md's Metrics table.

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..')

export interface Page { file: string, text: string }

/** README.md, every docs/*.md, SECURITY.md and emulator/README.md, as they are on disk. */
export function docPages (root = ROOT): Page[] {
  const files = ['README.md', 'SECURITY.md', 'emulator/README.md']
  const docs = join(root, 'docs')
  if (existsSync(docs)) files.push(...readdirSync(docs).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`))
  return files.filter((f) => existsSync(join(root, f))).map((file) => ({ file, text: readFileSync(join(root, file), 'utf8') }))
}

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/** Names (settings, events) that no page shows as code: `NAME`. */
export function missingCodeNames (names: readonly string[], pages: readonly Page[]): string[] {
  return names.filter((name) => !pages.some((p) => p.text.includes('`' + name + '`')))
}

/**
 * Routes no page names: a line must hold the method and the path, written with `{param}` (as OpenAPI does)
 * or `:param`, and the path must end there (`/api/webhooks/{id}` is not found in `/api/webhooks/{id}/deliveries`).
 */
export function missingRoutes (routes: ReadonlyArray<{ method: string, path: string }>, pages: readonly Page[]): string[] {
  const lines = pages.flatMap((p) => p.text.split('\n'))
  return routes.filter(({ method, path }) => {
    const spellings = [path, path.replace(/\{([^}]+)\}/g, ':$1')]
    const pathRe = new RegExp(`(?:${spellings.map(escape).join('|')})(?![A-Za-z0-9_/{:-])`)
    const methodRe = new RegExp(`\\b${method.toUpperCase()}\\b`)
    return !lines.some((line) => pathRe.test(line) && methodRe.test(line))
  }).map(({ method, path }) => `${method.toUpperCase()} ${path}`)
}

/** A setting as the env schema declares it: its name and its default, when it has one. */
export interface Setting { name: string, default?: unknown }

/** The settings of a TypeBox object schema (schemas/env.ts's EnvSchema), read from the schema itself. */
export function settingsOf (schema: { properties: Record<string, { default?: unknown }> }): Setting[] {
  return Object.entries(schema.properties).map(([name, prop]) => 'default' in prop ? { name, default: prop.default } : { name })
}

/**
 * The rows of a page's Markdown tables that have a `Default` column, by the setting their first cell names
 * as code (`| \`PORT\` | \`3000\` | … |`): that row's Default cell.
 */
export function defaultCells (text: string): Map<string, string> {
  const cells = (line: string): string[] => line.trim().replace(/^\|/, '').replace(/\|$/, '').split('|').map((c) => c.trim())
  const rows = new Map<string, string>()
  const lines = text.split('\n')
  let column = -1
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]
    if (!line.trim().startsWith('|')) { column = -1; continue }
    // the separator row: the line above it is the table's header
    if (/^\|\s*:?-{3,}/.test(line.trim()) && i > 0) { column = cells(lines[i - 1]).indexOf('Default'); continue }
    const row = cells(line)
    const name = /^`([A-Z][A-Z0-9_]*)`$/.exec(row[0] ?? '')?.[1]
    if (column > 0 && name !== undefined && !rows.has(name)) rows.set(name, row[column] ?? '')
  }
  return rows
}

/**
 * What `file` (a page with settings tables) lacks: a row per setting, whose Default cell shows the schema's
 * default as code (`\`300\``, `\`false\``) or, for a setting without one, says what unset means.
 */
export function settingProblems (settings: readonly Setting[], text: string, file: string): string[] {
  const rows = defaultCells(text)
  const problems: string[] = []
  for (const s of settings) {
    const shown = 'default' in s ? '`' + String(s.default) + '`' : undefined
    const cell = rows.get(s.name)
    if (cell === undefined) {
      problems.push(`${file}: no row for setting ${s.name} (schemas/env.ts); add | \`${s.name}\` | ${shown ?? 'unset (what that means)'} | range / format | meaning | to a settings table`)
    } else if (shown !== undefined && !cell.includes(shown)) {
      problems.push(`${file}: setting ${s.name} shows the default "${cell}"; schemas/env.ts's default is ${shown}`)
    } else if (cell === '') {
      problems.push(`${file}: setting ${s.name} has an empty Default cell; schemas/env.ts gives it no default: say what unset means`)
    }
  }
  return problems
}

/**
 * What .env.example lacks: a line per setting, `NAME=value` or commented out (`# NAME=…`); a line that is
 * not commented out sets the default (the file says its values are the defaults).
 */
export function envExampleProblems (settings: readonly Setting[], text: string, file = '.env.example'): string[] {
  const problems: string[] = []
  for (const s of settings) {
    const active = new RegExp(`^${s.name}=(.*)$`, 'm').exec(text)
    const commented = new RegExp(`^#\\s*${s.name}=`, 'm').test(text)
    if (active === null && !commented) {
      problems.push(`${file}: no line for setting ${s.name} (schemas/env.ts); add ${'default' in s ? `${s.name}=${String(s.default)}` : `# ${s.name}=<example>`} with a comment`)
    } else if (active !== null && (!('default' in s) || active[1].trim() !== String(s.default))) {
      problems.push(`${file}: ${s.name}=${active[1]} is not the default (schemas/env.ts: ${'default' in s ? String(s.default) : 'none'}); set the default or comment the line out`)
    }
  }
  return problems
}

/** Every `npm run X`, `npm start` and `npm test` a page names, with the scripts that do not exist. */
export function missingScripts (pages: readonly Page[], scripts: Readonly<Record<string, string>>): string[] {
  const missing = new Set<string>()
  for (const { file, text } of pages) {
    // options may come between `run` and the name: `npm run --silent emulator`
    for (const m of text.matchAll(/\bnpm run(?:\s+--?[a-z-]+)*\s+([a-z][\w:.-]*)/g)) {
      if (!(m[1] in scripts)) missing.add(`${file}: npm run ${m[1]}`)
    }
    for (const m of text.matchAll(/\bnpm (start|test)\b/g)) {
      if (!(m[1] in scripts)) missing.add(`${file}: npm ${m[1]}`)
    }
  }
  return [...missing]
}

/** The Markdown a reader reaches: docPages() and the other pages they link to. */
const LINKED_PAGES = ['UPGRADING.md', 'BENCHMARKS.md', 'client/README.md', 'bench/NOTES.md', 'patches/README.md', 'test/support/README.md']

/** A page's text without its fenced code blocks (a `#` line there is no heading, a `](` no link). */
const prose = (text: string): string => text.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '')

/** GitHub's anchors of a page's headings: lower case, punctuation dropped, spaces as `-`, repeats `-1`, `-2`. */
export function anchorsOf (text: string): Set<string> {
  const seen = new Map<string, number>()
  const anchors = new Set<string>()
  for (const m of prose(text).matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const slug = m[1].toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-')
    const n = seen.get(slug) ?? 0
    seen.set(slug, n + 1)
    anchors.add(n === 0 ? slug : `${slug}-${n}`)
  }
  return anchors
}

/**
 * The relative links of `pages` (paths from the repository root) that lead nowhere: a file that does not
 * exist, or an anchor that is no heading of the page it names. `read` gives a page's text by its path.
 */
export function brokenLinks (pages: readonly Page[], exists: (path: string) => boolean, read: (path: string) => string): string[] {
  const broken: string[] = []
  for (const { file, text } of pages) {
    for (const m of prose(text).matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = m[1]
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue
      const [path, anchor] = target.split('#') as [string, string | undefined]
      const resolved = path === '' ? file : posix.normalize(posix.join(posix.dirname(file), path))
      if (resolved.startsWith('../') || !exists(resolved)) { broken.push(`${file}: (${target}) leads to no file of the repository`); continue }
      if (anchor !== undefined && anchor !== '' && resolved.endsWith('.md') && !anchorsOf(read(resolved)).has(anchor)) {
        broken.push(`${file}: (${target}) names no heading of ${resolved}`)
      }
    }
  }
  return broken
}

/** `Name.md` file names a page cites (in prose or as code) that are not the name of any file in `files`. */
export function unknownMarkdownFiles (pages: readonly Page[], files: readonly string[]): string[] {
  const names = new Set(files.map((f) => basename(f)))
  const unknown: string[] = []
  for (const { file, text } of pages) {
    for (const m of prose(text).matchAll(/(?<![\w/.-])([A-Z][A-Z0-9_-]*\.md)\b/g)) {
      if (!names.has(m[1])) unknown.push(`${file}: ${m[1]}`)
    }
  }
  return [...new Set(unknown)]
}

/**
 * The errors of `source` (src/errors.ts: `createError('CODE', 'message', status)`) that `table` (docs/api.md's
 * status codes) does not show in the row of their status code. A message is matched up to its first
 * placeholder, `;` or `:` (the table writes `URL refused: …`); a message that is all placeholder is skipped.
 */
export function undocumentedErrors (source: string, table: string): string[] {
  const rows = table.split('\n').filter((l) => /^\| \d{3}/.test(l))
  const missing: string[] = []
  for (const m of source.matchAll(/createError(?:<[^>]*>)?\('[A-Z_]+', '((?:[^'\\]|\\.)*)', (\d{3})\)/g)) {
    const head = m[1].replace(/\\'/g, "'").split(/%[sdj]|;|:/)[0].trim()
    if (head === '') continue
    const row = rows.find((r) => (r.split('|')[1] ?? '').includes(m[2]))
    if (row === undefined || !row.includes(head)) missing.push(`${m[2]} ${head}`)
  }
  return missing
}

function scriptsOf (file: string): Record<string, string> {
  return (JSON.parse(readFileSync(join(ROOT, file), 'utf8')) as { scripts?: Record<string, string> }).scripts ?? {}
}

test('the checks find what is missing (a name, a route, a script)', () => {
  const pages: Page[] = [{
    file: 'docs/x.md',
    text: [
      '| `PORT` | `3000` |',
      'Set PORT_EXTRA somewhere (not as code).',
      '| GET | `/api/webhooks/{id}/deliveries` | deliveries |',
      '| POST | `/api/sessions/:sessionId/restart` | restart |',
      'npm run build, npm run --silent emulator, npm run nope, npm start'
    ].join('\n')
  }]
  assert.deepEqual(missingCodeNames(['PORT', 'PORT_EXTRA', 'HOST'], pages), ['PORT_EXTRA', 'HOST'])
  assert.deepEqual(missingRoutes([
    { method: 'get', path: '/api/webhooks/{id}/deliveries' },
    { method: 'get', path: '/api/webhooks/{id}' },
    { method: 'post', path: '/api/sessions/{sessionId}/restart' },
    { method: 'delete', path: '/api/sessions/{sessionId}/restart' }
  ], pages), ['GET /api/webhooks/{id}', 'DELETE /api/sessions/{sessionId}/restart'])
  assert.deepEqual(missingScripts(pages, { build: '', emulator: '' }), ['docs/x.md: npm run nope', 'docs/x.md: npm start'])
  assert.deepEqual(missingScripts(pages, { build: '', emulator: '', nope: '', start: '' }), [])
})

test('the link checks find a missing file, a missing heading and a file the repository does not hold', () => {
  const pages: Page[] = [
    { file: 'docs/a.md', text: '# Title\n## Compose `compose.yaml`, and more\n## Notes\n## Notes\n[ok](b.md#the-heading) [no](../nope.md) [up](../../x.md) [ok](#composeyaml-and-more) [dup](#notes-1) [bad](b.md#nope) [web](https://x.y/z.md)\n```\n[code](nope.md)\n# not a heading\n```\nSee SPEC.md and `README.md`, and bench/NOTES.md.' },
    { file: 'docs/b.md', text: '## The heading\n' }
  ]
  const files = new Map(pages.map((p) => [p.file, p.text]))
  assert.deepEqual([...anchorsOf(pages[0].text)], ['title', 'compose-composeyaml-and-more', 'notes', 'notes-1'])
  assert.deepEqual(brokenLinks(pages, (f) => files.has(f), (f) => files.get(f) ?? ''), [
    'docs/a.md: (../nope.md) leads to no file of the repository',
    'docs/a.md: (../../x.md) leads to no file of the repository',
    'docs/a.md: (#composeyaml-and-more) names no heading of docs/a.md',
    'docs/a.md: (b.md#nope) names no heading of docs/b.md'
  ])
  assert.deepEqual(unknownMarkdownFiles(pages, ['README.md', 'docs/a.md']), ['docs/a.md: SPEC.md'])
})

test('the error check finds a message missing from its code\'s row', () => {
  const source = "createError('A', 'Session not found', 404)\ncreateError<[string]>('B', 'Downloading failed: %s', 502)\ncreateError('C', '%s', 400)\ncreateError('D', 'Gone away', 404)"
  const table = '| 404 | unknown | `Session not found` |\n| 500 | other | `Downloading failed: …` |'
  assert.deepEqual(undocumentedErrors(source, table), ['502 Downloading failed', '404 Gone away'])
})

test('the settings checks find a missing row, a wrong default and a stale .env.example line', () => {
  const settings = settingsOf({ properties: { PORT: { default: 3000 }, HOST: { default: '0.0.0.0' }, METRICS_PUBLIC: { default: false }, API_KEY: {}, TRUST_PROXY: {} } })
  assert.deepEqual(settings, [{ name: 'PORT', default: 3000 }, { name: 'HOST', default: '0.0.0.0' }, { name: 'METRICS_PUBLIC', default: false }, { name: 'API_KEY' }, { name: 'TRUST_PROXY' }])
  const page = [
    '| Setting | Default | Range / format | Meaning |',
    '|---|---|---|---|',
    '| `PORT` | `3000` | integer | HTTP port |',
    '| `HOST` | `127.0.0.1` | address | wrong default |',
    '| `API_KEY` | | 16+ | empty default cell |',
    '',
    '| Name | Meaning |',
    '|---|---|',
    '| `METRICS_PUBLIC` | a table without a Default column does not count |'
  ].join('\n')
  assert.deepEqual(defaultCells(page), new Map([['PORT', '`3000`'], ['HOST', '`127.0.0.1`'], ['API_KEY', '']]))
  assert.deepEqual(settingProblems(settings, page, 'docs/x.md').map((p) => p.replace(/ \(.*$|;.*$/, '')), [
    'docs/x.md: setting HOST shows the default "`127.0.0.1`"',
    'docs/x.md: no row for setting METRICS_PUBLIC',
    'docs/x.md: setting API_KEY has an empty Default cell',
    'docs/x.md: no row for setting TRUST_PROXY'
  ])
  const example = 'PORT=3000\nHOST=127.0.0.1\n# API_KEY=change-me\nTRUST_PROXY=1\n'
  assert.deepEqual(envExampleProblems(settings, example).map((p) => p.replace(/ \(.*$|;.*$/, '')), [
    '.env.example: HOST=127.0.0.1 is not the default',
    '.env.example: no line for setting METRICS_PUBLIC',
    '.env.example: TRUST_PROXY=1 is not the default'
  ])
})

const read = (file: string): string => readFileSync(join(ROOT, file), 'utf8')
const listed = (problems: readonly string[]): string => `\n  ${problems.join('\n  ')}`

test('every setting of the env schema has a row in docs/operations.md with its default, and a line in .env.example', () => {
  const settings = settingsOf(EnvSchema)
  assert.ok(settings.length >= 40 && settings.some((s) => s.name === 'PORT' && s.default === 3000), `the settings are read from the schema (${settings.length})`)
  const problems = settingProblems(settings, read('docs/operations.md'), 'docs/operations.md')
  assert.equal(problems.length, 0, `settings of schemas/env.ts that docs/operations.md does not show right:${listed(problems)}`)
  const example = envExampleProblems(settings, read('.env.example'))
  assert.equal(example.length, 0, `settings of schemas/env.ts that .env.example does not show right:${listed(example)}`)
})

test('every socket.io event is documented', () => {
  assert.deepEqual(missingCodeNames(Object.keys(EventSchemas), docPages()), [], 'events not named (as `name`) in README.md or docs/*.md')
})

test('every route of the OpenAPI document is in docs/api.md with its method', async (t) => {
  const { app } = await build(t)
  const doc = (await app.inject({ url: '/docs/json' })).json() as { paths: Record<string, Record<string, unknown>> }
  const routes = Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((method) => ({ method, path })))
  assert.ok(routes.length >= 30, `the OpenAPI document lists the routes (${routes.length})`)
  assert.ok(routes.some((r) => r.path === '/metrics'), '/metrics is among them')
  const missing = missingRoutes(routes, docPages().filter((p) => p.file === 'docs/api.md'))
  assert.equal(missing.length, 0, `routes of the OpenAPI document (/docs/json) without a line naming their method and path in docs/api.md (add them to its Endpoints table):${listed(missing)}`)
})

test('every npm script the docs name exists', () => {
  const root = scriptsOf('package.json')
  const pages = docPages()
  assert.deepEqual(missingScripts(pages.filter((p) => p.file !== 'emulator/README.md'), root), [])
  // the emulator's README also names the scripts of its own package (run inside emulator/)
  const emulatorPages = pages.filter((p) => p.file === 'emulator/README.md')
  assert.deepEqual(missingScripts(emulatorPages, { ...root, ...scriptsOf('emulator/package.json') }), [])
})

test('every relative link of the docs leads to a file of the repository, and an anchor to a heading there', () => {
  const pages = [...docPages(), ...LINKED_PAGES.filter((f) => existsSync(join(ROOT, f))).map((file) => ({ file, text: read(file) }))]
  assert.ok(pages.length >= 20, `the pages are read (${pages.length})`)
  const broken = brokenLinks(pages, (f) => existsSync(join(ROOT, f)) && (statSync(join(ROOT, f)).isFile() || statSync(join(ROOT, f)).isDirectory()), read)
  assert.equal(broken.length, 0, `links that lead nowhere:${listed(broken)}`)
})

/** the repository's files without git (CI's Node 24 part tests a copy of the tree with no .git): what a clone holds */
function treeFiles (dir = ''): string[] {
  const skip = new Set(['.git', 'node_modules', 'dist', '.test-build', 'coverage', 'data', 'uploads', '.tmp'])
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const rel = dir === '' ? e.name : `${dir}/${e.name}`
    if (e.isDirectory()) return skip.has(e.name) ? [] : treeFiles(rel)
    return e.isFile() ? [rel] : []
  })
}

test('no page cites a Markdown file the repository does not hold', () => {
  let files: string[]
  try {
    files = execFileSync('git', ['ls-files'], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).split('\n').filter((f) => f !== '')
  } catch {
    files = treeFiles()
  }
  const pages = [...docPages(), ...LINKED_PAGES.filter((f) => existsSync(join(ROOT, f))).map((file) => ({ file, text: read(file) }))]
  // files of other tools a page may name (an AI assistant's instructions file), never this repository's
  const elsewhere = ['CLAUDE.md', 'AGENTS.md', 'GEMINI.md']
  const unknown = unknownMarkdownFiles(pages, [...files, ...elsewhere])
  assert.equal(unknown.length, 0, `Markdown files cited that are not in the repository (say the fact itself instead):${listed(unknown)}`)
})

test('the health samples show as many Baileys assumptions as the service checks', () => {
  const samples = ['docs/operations.md', 'UPGRADING.md'].flatMap((file) => [...read(file).matchAll(/"assumptions": (\d+)/g)].map((m) => ({ file, n: Number(m[1]) })))
  assert.ok(samples.length >= 2, 'the samples are found')
  for (const { file, n } of samples) assert.equal(n, ASSUMPTIONS.length, `${file} shows "assumptions": ${n}; src/platform/baileys/assumptions*.ts hold ${ASSUMPTIONS.length}`)
})

test('every error of src/errors.ts is in docs/api.md\'s status-code table, in the row of its code', () => {
  const source = read('src/errors.ts')
  assert.ok((source.match(/createError/g) ?? []).length >= 20, 'the errors are read')
  const missing = undocumentedErrors(source, read('docs/api.md'))
  assert.equal(missing.length, 0, `errors not in the row of their code in docs/api.md#status-codes:${listed(missing)}`)
})

test('every metric the service registers has a row in docs/operations.md', () => {
  const names = [...read('plugins/metrics/index.ts').matchAll(/name: '(status_tracker_[a-z_]+)'/g)].map((m) => m[1])
  assert.ok(names.length >= 10, `the metrics are read (${names.length})`)
  const rows = read('docs/operations.md').split('\n').filter((l) => l.startsWith('| `status_tracker_'))
  const missing = names.filter((n) => !rows.some((r) => r.startsWith(`| \`${n}\` |`)))
  assert.deepEqual(missing, [], 'metrics of plugins/metrics/index.ts without a row in docs/operations.md#metrics')
})
