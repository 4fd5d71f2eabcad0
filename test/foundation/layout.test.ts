import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { importsOf, tsFiles, type Import } from '../support/imports.js'

// The design card's layout and the direction of its imports (docs/architecture.md, "The rooms"):
// - src/ is the core and knows nothing of Fastify: only src/app.ts (the composition root) and src/server.ts
//   may import fastify, fastify-plugin or an @fastify/* plugin, or anything under plugins/. @fastify/error is
//   allowed: it is a standalone error factory (no dependency on fastify) that src/errors.ts makes every answer with.
// - schemas/ holds TypeBox values only: it imports @sinclair/typebox and its own files, nothing else.
// - plugins/ reach data through src/db: no runtime import of a database driver or of Kysely there (a type is fine).
// - src/db sits below the platform: it imports nothing from src/platform (shared facts such as src/jid.ts live in src/).
// - mcp/ (the MCP server) is a client of the service: it reaches it over HTTP through client/, and imports
//   only its own files, schemas/ (its tools' inputs are the routes' schemas), client/src and the MCP SDK's or
//   TypeBox's packages; never src/, plugins/ or a database driver.
// - no file in src/, plugins/ or schemas/ is over 300 lines.

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..')
const MAX_LINES = 300

const isFastify = (spec: string) => spec === 'fastify' || spec === 'fastify-plugin' || (spec.startsWith('@fastify/') && spec !== '@fastify/error')
const DRIVERS = new Set(['better-sqlite3', 'better-sqlite3-napi', 'pg', 'kysely'])

/** the rule a file's import breaks, or null */
export function violation (file: string, imp: Import): string | null {
  const target = imp.spec.startsWith('.') ? relative(ROOT, resolve(ROOT, dirname(file), imp.spec)) : null
  const top = file.split('/')[0]
  if (top === 'src' && file !== 'src/app.ts' && file !== 'src/server.ts') {
    if (isFastify(imp.spec)) return `src/ is Fastify-free: ${imp.spec}`
    if (target?.startsWith('plugins/')) return `src/ does not import plugins/: ${imp.spec}`
    if (file.startsWith('src/db/') && target?.startsWith('src/platform/') === true) return `src/db does not import src/platform: ${imp.spec}`
  }
  if (top === 'schemas') {
    if (target !== null ? !target.startsWith('schemas/') : imp.spec !== '@sinclair/typebox') return `schemas/ imports only TypeBox: ${imp.spec}`
  }
  if (top === 'plugins' && !imp.typeOnly && DRIVERS.has(imp.spec)) return `plugins/ reach data through src/db: ${imp.spec}`
  if (top === 'mcp') {
    const allowed = target !== null
      ? ['mcp/', 'schemas/', 'client/src/'].some((dir) => target.startsWith(dir))
      : imp.spec.startsWith('node:') || imp.spec.startsWith('@modelcontextprotocol/sdk/') || imp.spec === '@sinclair/typebox'
    if (!allowed) return `mcp/ calls the service over HTTP (client/), not its code: ${imp.spec}`
  }
  return null
}

test('the tree has the design card\'s top level', () => {
  for (const entry of ['package.json', 'tsconfig.json', 'src', 'plugins', 'schemas', 'test', 'data', 'uploads']) {
    assert.ok(statSync(join(ROOT, entry)), `${entry} at the top level`)
  }
  assert.ok(statSync(join(ROOT, 'src/app.ts')).isFile())
  assert.ok(statSync(join(ROOT, 'src/server.ts')).isFile())
})

test('imports follow the layout\'s direction', () => {
  const broken: string[] = []
  for (const file of [...tsFiles('src'), ...tsFiles('plugins'), ...tsFiles('schemas'), ...tsFiles('mcp')]) {
    for (const imp of importsOf(readFileSync(join(ROOT, file), 'utf8'))) {
      const why = violation(file, imp)
      if (why !== null) broken.push(`${file}:${imp.line} ${why}`)
    }
  }
  assert.deepEqual(broken, [])
})

test('the rule catches each kind of violation (so the test above can fail)', () => {
  const check = (file: string, source: string) => importsOf(source).map((imp) => violation(file, imp)).filter((v) => v !== null)
  assert.equal(check('src/platform/x.ts', "import type { FastifyInstance } from 'fastify'\n").length, 1)
  assert.equal(check('src/db/x.ts', "import fp from 'fastify-plugin'\n").length, 1)
  assert.equal(check('src/media/x.ts', "import { a } from '../../plugins/core/db.js'\n").length, 1)
  assert.equal(check('src/media/x.ts', "const m = await import('../../plugins/core/db.js')\n").length, 1)
  assert.equal(check('schemas/x.ts', "import { a } from '../src/config.js'\n").length, 1)
  assert.equal(check('schemas/x.ts', "import { z } from 'zod'\n").length, 1)
  assert.equal(check('plugins/x/y.ts', "import pg from 'pg'\n").length, 1)
  assert.equal(check('src/db/stores/x.ts', "import { pnJid } from '../../platform/jid.js'\n").length, 1)
  assert.equal(check('src/db/x.ts', "import type { StatusView } from '../platform/types.js'\n").length, 1)
  assert.equal(check('mcp/x.ts', "import { openDb } from '../src/db/index.js'\n").length, 1)
  assert.equal(check('mcp/x.ts', "import { a } from '../plugins/statuses/service.js'\n").length, 1)
  assert.equal(check('mcp/x.ts', "import Database from 'better-sqlite3'\n").length, 1)
  // allowed
  assert.equal(check('src/app.ts', "import Fastify from 'fastify'\nimport a from '../plugins/core/db.js'\n").length, 0)
  assert.equal(check('src/errors.ts', "import createError from '@fastify/error'\n").length, 0)
  assert.equal(check('schemas/x.ts', "import { Type } from '@sinclair/typebox'\nimport { b } from './common.js'\n").length, 0)
  assert.equal(check('plugins/x/y.ts', "import type { Kysely } from 'kysely'\n").length, 0)
  assert.equal(check('src/db/stores/x.ts', "import { pnJid } from '../../jid.js'\n").length, 0)
  assert.equal(check('mcp/x.ts', "import { createClient } from '../client/src/index.js'\nimport { SessionParamsSchema } from '../schemas/common.js'\n" +
  "import { Server } from '@modelcontextprotocol/sdk/server/index.js'\nimport { readFileSync } from 'node:fs'\n").length, 0)
})

test(`no file in src/, plugins/ or schemas/ is over ${MAX_LINES} lines`, () => {
  const long = [...tsFiles('src'), ...tsFiles('plugins'), ...tsFiles('schemas')]
    .map((file) => ({ file, lines: readFileSync(join(ROOT, file), 'utf8').split('\n').length - 1 }))
    .filter((f) => f.lines > MAX_LINES)
    .map((f) => `${f.file}: ${f.lines}`)
  assert.deepEqual(long, [])
})
