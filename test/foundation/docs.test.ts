import { test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { EnvSchema } from '../../schemas/env.js'
import { EventSchemas } from '../../schemas/events.js'
import { build } from '../helper.js'

// The docs name everything a user can set, call or hear: every setting of the env schema, every route of
// the OpenAPI document (method and path on one line) and every socket.io event appears in README.md or a
// page under docs/ (every page there counts, so pages added later count too; emulator/README.md as well),
// and every `npm run X` the docs name is a script of package.json.

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

test('every setting of the env schema is documented', () => {
  const pages = docPages()
  assert.ok(pages.some((p) => p.file === 'README.md'), 'README.md is read')
  assert.deepEqual(missingCodeNames(Object.keys(EnvSchema.properties), pages), [], 'settings not named (as `NAME`) in README.md or docs/*.md')
})

test('every socket.io event is documented', () => {
  assert.deepEqual(missingCodeNames(Object.keys(EventSchemas), docPages()), [], 'events not named (as `name`) in README.md or docs/*.md')
})

test('every route is documented with its method', async (t) => {
  const { app } = await build(t)
  const doc = (await app.inject({ url: '/docs/json' })).json() as { paths: Record<string, Record<string, unknown>> }
  const routes = Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((method) => ({ method, path })))
  assert.ok(routes.length >= 30, `the OpenAPI document lists the routes (${routes.length})`)
  assert.ok(routes.some((r) => r.path === '/metrics'), '/metrics is among them')
  assert.deepEqual(missingRoutes(routes, docPages()), [], 'routes without a line naming their method and path in README.md or docs/*.md')
})

test('every npm script the docs name exists', () => {
  const root = scriptsOf('package.json')
  const pages = docPages()
  assert.deepEqual(missingScripts(pages.filter((p) => p.file !== 'emulator/README.md'), root), [])
  // the emulator's README also names the scripts of its own package (run inside emulator/)
  const emulatorPages = pages.filter((p) => p.file === 'emulator/README.md')
  assert.deepEqual(missingScripts(emulatorPages, { ...root, ...scriptsOf('emulator/package.json') }), [])
})
