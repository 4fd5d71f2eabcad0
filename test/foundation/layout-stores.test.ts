import { test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { importsOf, tsFiles } from '../support/imports.js'

// The stores are the only door to the database (issue 34, src/db/stores/index.ts): outside src/db, in every
// .ts file of src/, plugins/ and schemas/, nothing sees a dialect, a driver or the raw connection.
// The rules read code, not prose: comments are dropped first (they may name SQLite and PostgreSQL as
// databases), and a string literal counts only where it names a driver, a dialect or the raw handle.
// - dialect: no identifier containing `dialect` (`handle.dialect`, `PostgresDialect`), no string literal that
//   is a dialect's name (`'sqlite'`, `'postgres'`, `'postgresql'`, `'pg'`: a dialect check by another name)
// - sqlite: no identifier containing `sqlite` in any case (`.sqlite`, `sqlite:`, `{ sqlite }`, `onSqliteConnection`,
//   `BetterSqlite3`), no lowercase `sqlite` inside a string (`'better-sqlite3'`, `'./sqlite/gate.js'`, `'sqlite:…'`);
//   `SQLite` capitalised inside a string is prose (a description, a log line) and allowed
// - pool: no word `pool` in any case (`handle.pool`, `pool.query`, `Pool`)
// - inTransaction: no `inTransaction` (Baileys' own key-store `isInTransaction` is another word)
// - driver: no import, not even of a type, of pg (and pg-*), kysely (and kysely-*) or any *sqlite* package: a plugin
//   that needs a transaction's type takes the unit of work's (`Transactors` from src/db/stores/transaction.ts)
// - db module: from src/db only src/db/stores/<aggregate>.ts and index.ts are imported, never a backend's
//   folder (src/db/sqlite/, src/db/postgres/: their connections, parts and the raw statement gate);
//   connection.ts, migrations/ and the rest are the stores' own, save the modules in DB_MODULES
// - row type: no import, not even of a type, of src/db/database.ts or a src/db/*-tables.ts (issue 40): a port
//   takes and returns the service's own types, declared next to the port (src/db/stores/<aggregate>.ts)
// - trailing tx: no transaction handed to a store method as its last argument (`statuses.remove(id, trx)`), no
//   `tx?:`/`trx:` parameter, no `StoreTx`/`ChangeTransaction`: a change that joins a transaction runs in the unit
//   of work (`stores.transaction(async (tx) => …)`, `tx.statuses.remove(id)`; src/db/stores/transaction.ts)
// - kysely: no query built outside src/db (`.selectFrom(`, `.insertInto(`, `.updateTable(`, `.deleteFrom(`,
//   `.executeQuery(`, an `sql` template): nothing outside src/db reaches a table but through a port
// - maybe-promise: a store result is a Promise, never `T | Promise<T>`: no `| Promise<`, no `Promise<T> | U` (U
//   other than null/undefined, which says "maybe nothing pending"), no MaybePromise/Awaitable/PromiseOr… type
// - db decorator: the `db` decorator goes (everything uses app.stores): no `.db` property read, no `db:` key, no `db`
//   destructured, no `decorate('db', …)`, no `DbHandle`, no `DB_HANDLE` (the symbol the db plugin keeps the
//   connection under for test/support/db.ts: only that plugin writes it, see EXCEPTIONS)

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..')

/** what the rules find and allow: `file: text` → how many lines may show it (exactly), and why */
const EXCEPTIONS: Record<string, { lines: number, why: string }> = {
  'plugins/metrics/index.ts: void | Promise<': { lines: 2, why: 'a scrape hook (onScrape) may be sync or async: a callback, not a store result' },
  'plugins/db/index.ts: DB_HANDLE': { lines: 2, why: 'the connection kept for tests (test/support/db.ts dbOf): imported and decorated, never read' },
  'plugins/core/validation.ts: pool': { lines: 6, why: "Fastify's validator compiler pool (ajv's), not a database pool" }
}

/** modules of src/db outside stores/ that others may import, and why; each must still exist and be imported */
const DB_MODULES: Record<string, { typeOnly: boolean, why: string }> = {
  'src/db/file-modes.ts': { typeOnly: false, why: 'file and folder modes, shared with the upload folder: no database in it' },
  'src/db/write-order.ts': { typeOnly: false, why: 'per-key write ordering over any async write: no database in it' }
}

export interface Leak { line: number, rule: string, text: string }

const scanned = () => [...tsFiles('src').filter((f) => !f.startsWith('src/db/')), ...tsFiles('plugins'), ...tsFiles('schemas')]

/** a word after which a `/` opens a regex, not a division */
const KEYWORD_BEFORE = /(?:^|[^\w$.])(?:return|typeof|case|in|of|delete|void|throw|new|else|do|yield|await|instanceof)\s*$/

/**
 * A source read as code: `code` is the source with comments, strings, template text and regex literals blanked
 * (line breaks kept, so an index still finds its line); `literals` are those strings and regexes with their lines.
 * A character scanner, no compiler: a `/` after a value is a division, after an operator a regex.
 */
export function codeOf (source: string): { code: string, literals: Array<{ value: string, line: number }> } {
  const code = source.split('')
  const literals: Array<{ value: string, line: number }> = []
  const lineAt = (index: number) => source.slice(0, index).split('\n').length
  const take = (from: number, to: number, at = from) => {
    literals.push({ value: source.slice(from, to), line: lineAt(at) })
    for (let k = from; k < to; k++) if (code[k] !== '\n') code[k] = ' '
  }
  const holes: number[] = [] // brace depths at which a template's `${` opened
  let depth = 0
  let last = ''
  // template text from i up to its end or its next `${`; returns where the code goes on
  const template = (i: number): number => {
    let j = i
    while (j < source.length && source[j] !== '`' && !(source[j] === '$' && source[j + 1] === '{')) j += source[j] === '\\' ? 2 : 1
    take(i, j)
    code[j] = ' '
    if (source[j] === '$') { code[j + 1] = ' '; holes.push(depth); return j + 2 }
    last = '`'
    return j + 1
  }
  let i = 0
  while (i < source.length) {
    const c = source[i]
    const next = source[i + 1]
    if (c === '/' && next === '/') {
      const end = source.indexOf('\n', i)
      take(i, end === -1 ? source.length : end); literals.pop(); i = end === -1 ? source.length : end
    } else if (c === '/' && next === '*') {
      const end = source.indexOf('*/', i + 2) === -1 ? source.length : source.indexOf('*/', i + 2) + 2
      take(i, end); literals.pop(); i = end
    } else if (c === "'" || c === '"') {
      let j = i + 1
      while (j < source.length && source[j] !== c && source[j] !== '\n') j += source[j] === '\\' ? 2 : 1
      take(i + 1, j, i); code[i] = ' '; code[j] = ' '; last = c; i = j + 1
    } else if (c === '`') {
      code[i] = ' '; i = template(i + 1)
    } else if (c === '}' && holes.length > 0 && holes[holes.length - 1] === depth) {
      holes.pop(); code[i] = ' '; i = template(i + 1)
    } else if (c === '/' && (last === '' || '(,=:[!&|?{};+-*%<>~^'.includes(last) || KEYWORD_BEFORE.test(source.slice(Math.max(0, i - 12), i)))) {
      let j = i + 1
      let inClass = false
      while (j < source.length && source[j] !== '\n' && (source[j] !== '/' || inClass)) {
        if (source[j] === '[') inClass = true
        else if (source[j] === ']') inClass = false
        j += source[j] === '\\' ? 2 : 1
      }
      take(i + 1, j, i); code[i] = ' '; code[j] = ' '; last = '/'; i = j + 1
    } else {
      if (c === '{') depth++
      else if (c === '}') depth--
      if (!/\s/.test(c)) last = c
      i++
    }
  }
  return { code: code.join(''), literals }
}

/** Promise<…> | U where U is a value (not null or undefined): the end of Promise's type argument, balanced */
function promiseOrValue (code: string): Array<{ index: number, text: string }> {
  const found: Array<{ index: number, text: string }> = []
  for (const m of code.matchAll(/\bPromise(?:Like)?\s*</g)) {
    let j = m.index + m[0].length
    for (let open = 1; j < code.length && open > 0; j++) {
      if (code[j] === '<') open++
      else if (code[j] === '>' && code[j - 1] !== '=') open--
    }
    const after = /^\s*\|\s*([\w$.]+)/.exec(code.slice(j))
    if (after !== null && after[1] !== 'null' && after[1] !== 'undefined') found.push({ index: m.index, text: `Promise<…> | ${after[1]}` })
  }
  return found
}

const DRIVER = /^(pg|pg-.+|@types\/pg|kysely|kysely-.+|postgres|.*sqlite.*)$/
const DIALECT_NAMES = new Set(['sqlite', 'postgres', 'postgresql', 'pg'])

/** where a file outside src/db reaches behind the stores */
export function leaks (file: string, source: string): Leak[] {
  const { code, literals } = codeOf(source)
  const lineAt = (index: number) => code.slice(0, index).split('\n').length
  const found: Leak[] = []
  const add = (line: number, rule: string, text: string) => {
    if (!found.some((f) => f.line === line && f.rule === rule && f.text === text)) found.push({ line, rule, text })
  }
  const scan = (rule: string, re: RegExp, text = (m: RegExpMatchArray) => m[0]) => {
    for (const m of code.matchAll(re)) add(lineAt(m.index ?? 0), rule, text(m))
  }
  scan('dialect', /\w*dialect\w*/gi)
  scan('sqlite', /\w*sqlite\w*/gi)
  scan('pool', /\bpool\b/gi, (m) => m[0].toLowerCase())
  scan('inTransaction', /\binTransaction\b/g)
  scan('maybe-promise', /[\w$.\]]+\s*\|\s*Promise(?:Like)?\s*</g, (m) => m[0].replace(/\s+/g, ' '))
  scan('maybe-promise', /\b(?:MaybePromise|Awaitable|ValueOrPromise|PromiseOr\w*)\b/g)
  for (const p of promiseOrValue(code)) add(lineAt(p.index), 'maybe-promise', p.text)
  scan('db decorator', /\.\s*db\b/g, () => '.db')
  scan('db decorator', /(?<![.\w$])db\s*\.(?!\.)/g, () => 'db.')
  scan('db decorator', /^\s*(?:readonly\s+)?db\??\s*:/gm, () => 'db:')
  scan('db decorator', /\{[^{}]*\bdb\b[^{}]*\}\s*=/g, () => '{ db } =')
  scan('db decorator', /\bDbHandle\b/g)
  scan('db decorator', /\bDB_HANDLE\b/g)
  scan('trailing tx', /,\s*(?:tx|trx)\s*\)/g, () => ', tx)')
  scan('trailing tx', /,\s*(?:tx|trx)\??\s*:\s*[\w$.<>[\]]+\s*\)|\b(?:tx|trx)\?\s*:/g, () => 'tx:')
  scan('trailing tx', /\b(?:StoreTx|ChangeTransaction)\b/g)
  scan('kysely', /\.\s*(?:selectFrom|insertInto|updateTable|deleteFrom|replaceInto|mergeInto|executeQuery)\s*\(/g, (m) => m[0].replace(/[\s.(]/g, ''))
  for (const m of source.matchAll(/\bsql\s*`/g)) if (code.slice(m.index, m.index + 3) === 'sql') add(lineAt(m.index), 'kysely', 'sql`')
  for (const m of source.matchAll(/\.\s*(?:decorate|hasDecorator|getDecorator)\s*(?:<[^>]*>)?\(\s*['"]db['"]/g)) add(lineAt(m.index), 'db decorator', "decorate('db')")
  for (const l of literals) {
    if (/sqlite/.test(l.value)) add(l.line, 'sqlite', l.value)
    if (DIALECT_NAMES.has(l.value)) add(l.line, 'dialect', `'${l.value}'`)
    if (/db-handle/.test(l.value)) add(l.line, 'db decorator', l.value)
  }
  for (const imp of importsOf(source)) {
    if (DRIVER.test(imp.spec)) add(imp.line, 'driver', imp.spec)
    if (!imp.spec.startsWith('.')) continue
    const target = relative(ROOT, resolve(ROOT, dirname(file), imp.spec)).replace(/\.js$/, '.ts')
    if (!target.startsWith('src/db/')) continue
    if (target === 'src/db/database.ts' || /^src\/db\/[\w-]+-tables\.ts$/.test(target)) { add(imp.line, 'row type', target); continue }
    const allowed = DB_MODULES[target]
    const store = /^src\/db\/stores\/[\w-]+\.ts$/.test(target) && !/-(pg|postgres|sqlite)\.ts$|\/sqlite-gate\.ts$/.test(target)
    if (!store && (allowed === undefined || (allowed.typeOnly && !imp.typeOnly))) add(imp.line, 'db module', target)
  }
  return found.sort((a, b) => a.line - b.line)
}

test('outside src/db nothing sees a dialect, a driver, the raw connection or the db decorator', () => {
  const broken: string[] = []
  const seen = new Map<string, number>()
  for (const file of scanned()) {
    for (const leak of leaks(file, readFileSync(join(ROOT, file), 'utf8'))) {
      const key = `${file}: ${leak.text}`
      if (key in EXCEPTIONS) seen.set(key, (seen.get(key) ?? 0) + 1)
      else broken.push(`${file}:${leak.line} ${leak.rule}: ${leak.text}`)
    }
  }
  assert.deepEqual(broken, [])
  const stale = Object.entries(EXCEPTIONS).filter(([key, e]) => seen.get(key) !== e.lines).map(([key, e]) => `${key}: ${seen.get(key) ?? 0} lines, not ${e.lines}`)
  assert.deepEqual(stale, [], 'these exceptions no longer match the code: update or remove them')
})

test('every module in DB_MODULES still exists and is imported from outside src/db', () => {
  const imported = new Set<string>()
  for (const file of scanned()) {
    for (const imp of importsOf(readFileSync(join(ROOT, file), 'utf8'))) {
      if (imp.spec.startsWith('.')) imported.add(relative(ROOT, resolve(ROOT, dirname(file), imp.spec)).replace(/\.js$/, '.ts'))
    }
  }
  assert.deepEqual(Object.keys(DB_MODULES).filter((m) => !existsSync(join(ROOT, m)) || !imported.has(m)), [], 'remove these from DB_MODULES')
})

test('each rule can fail (so the tests above can)', () => {
  const rules = (file: string, source: string) => leaks(file, source).map((l) => `${l.rule}: ${l.text}`).sort()
  const p = 'plugins/statuses/x.ts'
  assert.deepEqual(rules(p, "if (app.stores.kind.dialect === 'sqlite') return\n"), ['dialect: dialect', "dialect: 'sqlite'", 'sqlite: sqlite'].sort())
  assert.deepEqual(rules(p, "const open = opened.database === 'postgres'\n"), ["dialect: 'postgres'"])
  assert.deepEqual(rules(p, 'const row = handle.sqlite.prepare(q).get(id)\n'), ['sqlite: sqlite'])
  assert.deepEqual(rules(p, 'const { sqlite, pool } = x\n'), ['sqlite: sqlite', 'pool: pool'].sort())
  assert.deepEqual(rules(p, 'onSqliteConnection((c) => c)\n'), ['sqlite: onSqliteConnection'])
  assert.deepEqual(rules(p, 'await pool.query(text)\n'), ['pool: pool'])
  assert.deepEqual(rules(p, 'while (db.inTransaction) await sleep(1)\n'), ['inTransaction: inTransaction', 'db decorator: db.'].sort())
  assert.deepEqual(rules(p, "import Database from 'better-sqlite3'\n"), ['driver: better-sqlite3', 'sqlite: better-sqlite3'].sort())
  assert.deepEqual(rules(p, "import pg from 'pg'\nimport type { Transaction } from 'kysely'\n"), ['driver: pg', "dialect: 'pg'", 'driver: kysely'].sort())
  assert.deepEqual(rules(p, "import { sql } from 'kysely'\n"), ['driver: kysely'])
  assert.deepEqual(rules(p, "import type { NewEvent } from '../../src/db/repositories/events.js'\n"), ['db module: src/db/repositories/events.ts'])
  assert.deepEqual(rules('src/platform/x.ts', "import { openDatabase } from '../db/connection.js'\n"), ['db module: src/db/connection.ts'])
  assert.deepEqual(rules(p, "import { x } from '../../src/db/stores/webhooks-pg.js'\n"), ['db module: src/db/stores/webhooks-pg.ts'])
  assert.deepEqual(rules(p, "import { receipts } from '../../src/db/postgres/viewers.js'\n"), ['db module: src/db/postgres/viewers.ts'])
  assert.deepEqual(rules(p, "import { StatusRow } from '../../src/db/database.js'\n"), ['row type: src/db/database.ts'])
  assert.deepEqual(rules(p, "import type { StatusRow } from '../../src/db/database.js'\n"), ['row type: src/db/database.ts'])
  assert.deepEqual(rules(p, "import type { ScheduleTable } from '../../src/db/schedule-tables.js'\n"), ['row type: src/db/schedule-tables.ts'])
  assert.deepEqual(rules(p, 'if (!await statuses.remove(row.id, trx)) return false\n'), ['trailing tx: , tx)'])
  assert.deepEqual(rules(p, 'await store.finishRun(runId, end, tx)\n'), ['trailing tx: , tx)'])
  assert.deepEqual(rules(p, 'export interface S { remove: (id: number, tx?: StoreTx) => Promise<boolean> }\n'), ['trailing tx: tx:', 'trailing tx: StoreTx'].sort())
  assert.deepEqual(rules(p, 'holdNew: (trx: ChangeTransaction, id: string) => Promise<void>\n'), ['trailing tx: ChangeTransaction'])
  assert.deepEqual(rules(p, 'record: (id: string, now: number, trx: Db) => Promise<void>\n'), ['trailing tx: tx:'])
  assert.deepEqual(rules(p, "const rows = await handle.selectFrom('statuses').selectAll().execute()\n"), ['kysely: selectFrom'])
  assert.deepEqual(rules(p, "await t.insertInto('viewers').values(v).execute()\nawait t.deleteFrom('viewers').execute()\n"), ['kysely: insertInto', 'kysely: deleteFrom'].sort())
  assert.deepEqual(rules(p, 'await sql`select 1`.execute(k)\n'), ['kysely: sql`'])
  assert.deepEqual(rules(p, 'export interface S { get: (id: string) => Row | Promise<Row> }\n'), ['maybe-promise: Row | Promise<'])
  assert.deepEqual(rules(p, 'type R = Promise<Map<string, number>> | boolean\n'), ['maybe-promise: Promise<…> | boolean'])
  assert.deepEqual(rules(p, 'type M<T> = MaybePromise<T>\n'), ['maybe-promise: MaybePromise'])
  assert.deepEqual(rules(p, 'const n = await fastify.db.db.selectFrom(t).execute()\n'), ['db decorator: .db', 'kysely: selectFrom'].sort())
  assert.deepEqual(rules(p, 'const { db, config } = app\n'), ['db decorator: { db } ='])
  assert.deepEqual(rules(p, "app.decorate<X>('db', handle)\n"), ["db decorator: decorate('db')"])
  assert.deepEqual(rules(p, 'interface O {\n  db: DbHandle\n}\n'), ['db decorator: db:', 'db decorator: DbHandle'].sort())
  assert.deepEqual(rules(p, 'const h = app[DB_HANDLE]\n'), ['db decorator: DB_HANDLE'])
  assert.deepEqual(rules(p, "const h = app[Symbol.for('status-tracker.db-handle')]\n"), ['db decorator: status-tracker.db-handle'])
  // allowed: prose, the stores, Baileys' word, a pending promise, other words holding the letters
  assert.deepEqual(rules(p, [
    '// on SQLite the pool is one connection: dialect, inTransaction and the db decorator\'s sqlite are the store\'s',
    '/* PostgreSQL: pool */',
    "const d = Type.String({ description: 'SQLite file; `postgresql` with DATABASE_URL' })",
    "app.log.warn(`${n} rows: SQLite said ${'busy'}`)",
    "import type { Transactors } from '../../src/db/stores/transaction.js'",
    'const removed = await events.within(async (tx, emit) => await tx.statuses.remove(id))',
    'export type Within = <T>(work: (tx: Transactors, emit: Emit) => Promise<T>) => Promise<T>',
    'holdNew: (tx: Transactors, sessionId: string) => Promise<void>',
    "const q = 'the sql` template'",
    "import { openStores, type Stores } from '../../src/db/stores/index.js'",
    "import { PRIVATE_FILE_MODE } from '../../src/db/file-modes.js'",
    'const busy = keys.isInTransaction()',
    'let running: Promise<void> | null = null',
    'const pending: () => Promise<boolean> | undefined = () => undefined',
    "const file = 'status-tracker.db'",
    'const spooled = a / b / c',
    'const re = /\\/\\/ db: pool/'
  ].join('\n') + '\n'), [])
})

// One folder per backend (issue 40): inside src/db, only src/db/sqlite/ and src/db/postgres/ know their
// dialect. Elsewhere in src/db (the ports and the queries both backends share, in src/db/stores/) nothing
// branches on one: what differs is a part the backend hands in (stores/index.ts says how).
// - dialect: no identifier containing `dialect` (`handle.dialect === …`, `dialect: DbHandle['dialect']`), no
//   `isPostgres…`/`isSqlite…`, no `instanceof` a dialect's class (`PostgresAdapter`), no string literal that is
//   a dialect's name (`'sqlite'`, `'postgres'`, `'postgresql'`, `'pg'`)
// - driver: no import of pg (and pg-*) or any *sqlite* package: a shared query sees Kysely only
// - backend: no import of a backend folder (src/db/sqlite/…, src/db/postgres/…): shared code does not pick one
// The migrations (src/db/migrations/) are frozen files, each as it ran (their `isPostgres` column types stay).
const BACKENDS = ['src/db/sqlite/', 'src/db/postgres/']
const FROZEN = 'src/db/migrations/'

/** what the backend rule finds and allows, as EXCEPTIONS above */
const BACKEND_EXCEPTIONS: Record<string, { lines: number, why: string }> = {
  'src/db/stores/index.ts: dialect': { lines: 1, why: "the one choice: a test's own connection gets its backend's stores (storesOf)" },
  "src/db/stores/index.ts: 'sqlite'": { lines: 1, why: 'the same line: the one choice' },
  'src/db/stores/index.ts: backend': { lines: 2, why: 'the one choice: each backend\'s open and build' },
  'src/db/connection.ts: backend': { lines: 6, why: "the handle of either backend, for tests: the backends' types and open functions, re-exported" }
}

/** where a file of src/db outside the backend folders names a dialect, a driver or a backend */
export function dialectBranches (file: string, source: string): Leak[] {
  const { code, literals } = codeOf(source)
  const lineAt = (index: number) => code.slice(0, index).split('\n').length
  const found: Leak[] = []
  const add = (line: number, rule: string, text: string) => {
    if (!found.some((f) => f.line === line && f.rule === rule && f.text === text)) found.push({ line, rule, text })
  }
  for (const m of code.matchAll(/\w*dialect\w*/gi)) add(lineAt(m.index), 'dialect', m[0])
  for (const m of code.matchAll(/\bis(?:Postgres|Sqlite|Pg)\w*/gi)) add(lineAt(m.index), 'dialect', m[0])
  for (const m of code.matchAll(/\binstanceof\s+(\w*(?:Postgres|Sqlite|Pg)\w*)/gi)) add(lineAt(m.index), 'dialect', m[1])
  for (const l of literals) if (DIALECT_NAMES.has(l.value)) add(l.line, 'dialect', `'${l.value}'`)
  for (const imp of importsOf(source)) {
    if (!imp.spec.startsWith('.')) {
      if (/^(pg|pg-.+|@types\/pg|postgres|.*sqlite.*)$/.test(imp.spec)) add(imp.line, 'driver', imp.spec)
      continue
    }
    const target = relative(ROOT, resolve(ROOT, dirname(file), imp.spec))
    if (BACKENDS.some((b) => target.startsWith(b))) add(imp.line, 'backend', target.replace(/\.js$/, '.ts'))
  }
  return found.sort((a, b) => a.line - b.line)
}

const sharedDbFiles = () => tsFiles('src/db').filter((f) => !BACKENDS.some((b) => f.startsWith(b)) && !f.startsWith(FROZEN))

test('inside src/db only the backend folders branch on a dialect', () => {
  const broken: string[] = []
  const seen = new Map<string, number>()
  for (const file of sharedDbFiles()) {
    for (const leak of dialectBranches(file, readFileSync(join(ROOT, file), 'utf8'))) {
      const key = `${file}: ${leak.rule === 'backend' ? 'backend' : leak.text}`
      if (key in BACKEND_EXCEPTIONS) seen.set(key, (seen.get(key) ?? 0) + 1)
      else broken.push(`${file}:${leak.line} ${leak.rule}: ${leak.text}`)
    }
  }
  assert.deepEqual(broken, [])
  const stale = Object.entries(BACKEND_EXCEPTIONS).filter(([key, e]) => seen.get(key) !== e.lines).map(([key, e]) => `${key}: ${seen.get(key) ?? 0} lines, not ${e.lines}`)
  assert.deepEqual(stale, [], 'these exceptions no longer match the code: update or remove them')
  for (const b of BACKENDS) assert.ok(existsSync(join(ROOT, b, 'index.ts')), `${b}index.ts builds the backend's stores`)
})

test('each backend rule can fail (so the test above can)', () => {
  const rules = (file: string, source: string) => dialectBranches(file, source).map((l) => `${l.rule}: ${l.text}`).sort()
  const f = 'src/db/stores/x.ts'
  assert.deepEqual(rules(f, "shared: handle.dialect === 'postgres',\n"), ['dialect: dialect', "dialect: 'postgres'"].sort())
  assert.deepEqual(rules(f, "export function s (db: Db, dialect: DbHandle['dialect']) {}\n"), ['dialect: dialect'])
  assert.deepEqual(rules(f, 'const expr = db.getExecutor().adapter instanceof PostgresAdapter ? a : b\n'), ['dialect: PostgresAdapter'])
  assert.deepEqual(rules(f, 'return isPostgres(db) ? a : b\n'), ['dialect: isPostgres'])
  assert.deepEqual(rules(f, "const t = kind === 'sqlite' ? a : b\n"), ["dialect: 'sqlite'"])
  assert.deepEqual(rules(f, "import type pg from 'pg'\nimport type SQLite from 'better-sqlite3'\n"), ['driver: pg', "dialect: 'pg'", 'driver: better-sqlite3'].sort())
  assert.deepEqual(rules(f, "import { receipts } from '../postgres/viewers.js'\n"), ['backend: src/db/postgres/viewers.ts'])
  assert.deepEqual(rules('src/db/x.ts', "import { onSqliteConnection } from './sqlite/gate.js'\n"), ['backend: src/db/sqlite/gate.ts'])
  // allowed: prose, Kysely, the shared stores, a part handed in
  assert.deepEqual(rules(f, [
    '// both dialects run this; PostgreSQL takes the lock in its own folder',
    "import { sql, type Kysely } from 'kysely'",
    "import type { NewEvent } from './events.js'",
    'export function eventStore (db: Db, backend: EventBackend) { return backend.append }',
    "const d = 'a sqlite file'"
  ].join('\n') + '\n'), [])
})

/** where a port (src/db/stores/) takes a transaction as a trailing argument: the unit of work replaces it */
export function trailingTx (source: string): string[] {
  const { code } = codeOf(source)
  const lineAt = (index: number) => code.slice(0, index).split('\n').length
  const re = /,\s*(?:tx|trx)\??\s*:\s*[\w$.<>[\]]+\s*\)|\b(?:tx|trx)\?\s*:|\b(?:tx|trx)\s*=\s*db\b|\b(?:StoreTx|ChangeTransaction)\b/g
  return [...code.matchAll(re)].map((m) => `${lineAt(m.index)}: ${m[0].replace(/\s+/g, ' ')}`)
}

test('no port takes a transaction argument (the unit of work joins one)', () => {
  const found = tsFiles('src/db/stores').flatMap((f) => trailingTx(readFileSync(join(ROOT, f), 'utf8')).map((l) => `${f}:${l}`))
  assert.deepEqual(found, [])
  assert.deepEqual(trailingTx('  remove: (id: number, tx?: StoreTx) => Promise<boolean>\n'), ['1: , tx?: StoreTx)'])
  assert.deepEqual(trailingTx('  prune: (tx?: Db) => Promise<number>\n'), ['1: tx?:'])
  assert.deepEqual(trailingTx('export type StoreTx = Kysely<Database>\n'), ['1: StoreTx'])
  assert.deepEqual(trailingTx('  record: (id: string, now: number, tx: Db) => Promise<void>\n'), ['1: , tx: Db)'])
  assert.deepEqual(trailingTx('    async find (sessionId, id, tx = db) {\n'), ['1: tx = db'])
  assert.deepEqual(trailingTx('export type UnitOfWork = <T>(work: (tx: Transactors) => Promise<T>) => Promise<T>\n'), [])
})

test('the reader drops comments and strings but keeps the lines', () => {
  const { code, literals } = codeOf("a // x\nb /* y\n*/ 'c' `d${e}f`, /g/\nreturn /[\"']/.test(h) ? i / j : k\n")
  assert.equal(code.split('\n').length, 5)
  assert.deepEqual(code.replace(/\s+/g, ''), 'abe,return.test(h)?i/j:k')
  assert.deepEqual(literals.map((l) => [l.value, l.line]), [['c', 3], ['d', 3], ['f', 3], ['g', 3], ['["\']', 4]])
})
