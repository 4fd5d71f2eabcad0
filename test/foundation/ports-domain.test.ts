import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'

// The ports speak the service's own types (issue 40): for every member of `Stores` (src/db/stores/ports.ts),
// every method's parameters and resolved return type, walked through promises, arrays, maps, unions,
// intersections, functions and object types, have no snake_case property (a column name leaking out of
// src/db), and none of them is a table type of src/db/database.ts or a src/db/*-tables.ts file (nor an alias,
// Pick or Omit of one). Read with the TypeScript compiler, so a re-export or an alias cannot hide a row.

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..')
const PORTS = join(ROOT, 'src', 'db', 'stores', 'ports.ts')

/** aggregates whose ports may still speak rows, each for a reason (none since issue 40: every port speaks the domain) */
const NOT_YET = new Set<string>()

/** the files whose types are tables */
const isTableFile = (file: string): boolean => /[/\\]src[/\\]db[/\\](database|[\w-]+-tables)\.ts$/.test(file)

/** a library's file: the interfaces and classes it declares (Promise, Map, Uint8Array …) have their type arguments walked, not their members */
const isLibrary = (file: string): boolean => /[/\\]node_modules[/\\]/.test(file) || /[/\\]lib\.[\w.]+\.d\.ts$/.test(file)

/** every problem of the `Stores` interface in `file`, as "member.method: what" */
export function portProblems (file: string, opts: { skip?: Set<string>, tableFile?: (file: string) => boolean } = {}): string[] {
  const tableFile = opts.tableFile ?? isTableFile
  const program = ts.createProgram([file], {
    target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext,
    strict: true, skipLibCheck: true, noEmit: true, types: ['node']
  })
  const checker = program.getTypeChecker()
  const source = program.getSourceFile(file)
  assert.ok(source, `${file} is read`)
  const stores = source.statements.find((s): s is ts.InterfaceDeclaration => ts.isInterfaceDeclaration(s) && s.name.text === 'Stores')
  assert.ok(stores, `${file} declares the interface Stores`)
  const problems = new Set<string>()

  const declaredIn = (symbol: ts.Symbol | undefined): string[] => (symbol?.getDeclarations() ?? []).map((d) => d.getSourceFile().fileName)

  function walk (type: ts.Type, where: string, seen: Set<ts.Type>): void {
    if (seen.has(type)) return
    seen.add(type)
    for (const symbol of [type.aliasSymbol, type.getSymbol()]) {
      const table = declaredIn(symbol).find(tableFile)
      if (table !== undefined) problems.add(`${where}: the table type ${symbol?.getName() ?? '?'} (${relative(ROOT, table)})`)
    }
    for (const t of type.aliasTypeArguments ?? []) walk(t, where, seen)
    for (const table of tablesNamedBy(type.aliasSymbol)) problems.add(`${where}: ${type.aliasSymbol?.getName() ?? '?'} is made of the table type ${table}`)
    if (type.isUnionOrIntersection()) { for (const t of type.types) walk(t, where, seen); return }
    if ((type.flags & ts.TypeFlags.Object) === 0) return
    const reference = (type as ts.ObjectType).objectFlags & ts.ObjectFlags.Reference ? checker.getTypeArguments(type as ts.TypeReference) : []
    for (const t of reference) walk(t, where, seen)
    // arrays and tuples: their elements only
    if (checker.isArrayType(type) || checker.isTupleType(type)) return
    // a library's own interfaces and classes (Promise, Map, Uint8Array …), not its mapped types (Kysely's Selectable)
    const symbol = type.getSymbol()
    const files = declaredIn(symbol)
    if (symbol !== undefined && (symbol.flags & (ts.SymbolFlags.Interface | ts.SymbolFlags.Class)) !== 0 && files.length > 0 && files.every(isLibrary)) return
    for (const signature of [...type.getCallSignatures(), ...type.getConstructSignatures()]) walkSignature(signature, where, seen)
    for (const property of type.getProperties()) {
      const name = property.getName()
      // a symbol-keyed member (Symbol.iterator …) names no field
      if (name.startsWith('__@')) continue
      if (name.includes('_')) problems.add(`${where}: the field ${name}`)
      // a Pick, an Omit or a mapped copy of a table keeps its fields' declarations
      const table = declaredIn(property).find(tableFile)
      if (table !== undefined) problems.add(`${where}: the field ${name} of a table type (${relative(ROOT, table)})`)
      const declaration = property.valueDeclaration ?? property.getDeclarations()?.[0]
      if (declaration !== undefined) walk(checker.getTypeOfSymbolAtLocation(property, declaration), `${where} → ${name}`, seen)
    }
    const index = checker.getIndexInfosOfType(type)
    for (const info of index) { walk(info.keyType, where, seen); walk(info.type, where, seen) }
  }

  /** the table types a type alias's declaration names (`type X = Pick<ThingTable, 'id'>`: ThingTable), as "Name (file)" */
  function tablesNamedBy (alias: ts.Symbol | undefined): string[] {
    const found: string[] = []
    const visit = (node: ts.Node): void => {
      if (ts.isTypeReferenceNode(node)) {
        let symbol = checker.getSymbolAtLocation(node.typeName)
        if (symbol !== undefined && (symbol.flags & ts.SymbolFlags.Alias) !== 0) symbol = checker.getAliasedSymbol(symbol)
        const table = declaredIn(symbol).find(tableFile)
        if (table !== undefined) found.push(`${symbol?.getName() ?? '?'} (${relative(ROOT, table)})`)
      }
      ts.forEachChild(node, visit)
    }
    for (const d of alias?.getDeclarations() ?? []) if (ts.isTypeAliasDeclaration(d)) visit(d.type)
    return found
  }

  function walkSignature (signature: ts.Signature, where: string, seen: Set<ts.Type>): void {
    for (const p of signature.getParameters()) {
      const declaration = p.valueDeclaration ?? p.getDeclarations()?.[0]
      if (declaration !== undefined) walk(checker.getTypeOfSymbolAtLocation(p, declaration), `${where} (${p.getName()})`, seen)
    }
    walk(signature.getReturnType(), `${where} returns`, seen)
  }

  for (const member of checker.getPropertiesOfType(checker.getTypeAtLocation(stores))) {
    if (opts.skip?.has(member.getName()) === true) continue
    const port = checker.getTypeOfSymbolAtLocation(member, stores)
    for (const method of port.getProperties()) {
      const declaration = method.valueDeclaration ?? method.getDeclarations()?.[0]
      if (declaration === undefined) continue
      const where = `${member.getName()}.${method.getName()}`
      if (method.getName().includes('_')) problems.add(`${where}: the method's name`)
      const type = checker.getTypeOfSymbolAtLocation(method, declaration)
      // one walk per method: a type met by two methods is reported under each
      for (const signature of type.getCallSignatures()) walkSignature(signature, where, new Set())
    }
  }
  return [...problems]
}

test('every port of Stores takes and returns the service\'s own types: no snake_case field, no table type', () => {
  assert.deepEqual(portProblems(PORTS, { skip: NOT_YET }), [])
})

test('the rule above can fail: a snake_case field, a table type and an alias of a row are found', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'ports-domain-'))
  t.after(() => { rmSync(dir, { recursive: true, force: true }) })
  writeFileSync(join(dir, 'package.json'), '{ "type": "module" }\n')
  writeFileSync(join(dir, 'things-tables.ts'), 'export interface ThingTable { id: number, created_at: number }\nexport interface PlainTable { id: number }\n')
  writeFileSync(join(dir, 'ports.ts'), [
    "import type { PlainTable, ThingTable } from './things-tables.js'",
    'export interface Thing { id: number, createdAt: number }',
    'export type ThingRecord = Pick<ThingTable, \'id\'>',
    'export interface Stores {',
    '  good: { find: (id: number) => Promise<Thing | undefined>, all: () => Promise<Map<string, Thing[]>>, put: (t: Thing, done: (t: Thing) => void) => Promise<void>, pairs: () => Promise<Array<[string, Thing]>> }',
    '  snake: { since: (at: number) => Promise<Array<{ created_at: number }>>, put: (row: { nested: { session_id: string } }) => Promise<void>, pairs: () => Promise<Array<[string, { last_seen: number }]>> }',
    '  table: { find: (id: number) => Promise<PlainTable> }',
    '  alias: { find: (id: number) => Promise<ThingRecord> }',
    '  skipped: { find: (id: number) => Promise<ThingTable> }',
    '}',
    ''
  ].join('\n'))
  const problems = portProblems(join(dir, 'ports.ts'), { skip: new Set(['skipped']), tableFile: (f) => f.endsWith('-tables.ts') })
  assert.deepEqual(problems.filter((p) => p.startsWith('good.')), [], 'domain types pass')
  assert.ok(problems.includes('snake.since returns: the field created_at'), problems.join('\n'))
  assert.ok(problems.includes('snake.put (row) → nested: the field session_id'), problems.join('\n'))
  assert.ok(problems.includes('snake.pairs returns: the field last_seen'), problems.join('\n'))
  assert.ok(problems.some((p) => p.startsWith('table.find returns: the table type PlainTable')), problems.join('\n'))
  assert.ok(problems.includes('alias.find returns: ThingRecord is made of the table type ThingTable (' + relative(ROOT, join(dir, 'things-tables.ts')) + ')'), problems.join('\n'))
  assert.deepEqual(problems.filter((p) => p.startsWith('skipped.')), [])
})
