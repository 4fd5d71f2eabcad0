import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { relative } from 'node:path'
import { test } from 'node:test'
import type { OpenAPI3 } from 'openapi-typescript'
import { build } from '../../test/helper.js'
import { EventSchemas, type EventPayloads } from '../../schemas/events.js'
import { GENERATED_FILE, REGENERATE, typesOf } from '../scripts/openapi-types.js'
import type { EventName, EventPayload } from '../src/events.js'

// The client's types are the service's OpenAPI document: the checked-in file is what openapi-typescript makes
// of GET /docs/json today, and the socket.io events it types are schemas/events.ts's (checked by the compiler:
// `npm run typecheck` fails when they part).

/** the first line where two texts differ (1-based), with both versions of it */
export function firstDifference (a: string, b: string): { line: number, checkedIn: string, generated: string } | null {
  const left = a.split('\n')
  const right = b.split('\n')
  for (let i = 0; i < Math.max(left.length, right.length); i++) {
    if (left[i] !== right[i]) return { line: i + 1, checkedIn: left[i] ?? '(end of file)', generated: right[i] ?? '(end of file)' }
  }
  return null
}

test('the checked-in client types are generated from the current /docs/json', async (t) => {
  const { app } = await build(t)
  const doc = (await app.inject({ url: '/docs/json' })).json() as OpenAPI3
  const generated = await typesOf(doc)
  const difference = firstDifference(readFileSync(GENERATED_FILE, 'utf8'), generated)
  const file = relative(process.cwd(), GENERATED_FILE)
  const where = `first difference, line ${difference?.line}:\n  checked in: ${difference?.checkedIn}\n  generated:  ${difference?.generated}`
  assert.equal(difference, null, `${file} is stale against the service's OpenAPI document (/docs/json): run \`${REGENERATE}\` and commit the file; ${where}`)
})

test('the staleness check sees a difference (so the test above can fail)', async () => {
  const doc: OpenAPI3 = { openapi: '3.0.3', info: { title: 't', version: '1' }, paths: { '/a': { get: { operationId: 'getA', responses: { 200: { description: 'ok', content: { 'application/json': { schema: { type: 'object', properties: { n: { type: 'integer' } } } } } } } } } } }
  const before = await typesOf(doc)
  assert.match(before, /Regenerate with `npm run generate:client`/)
  assert.equal(firstDifference(before, await typesOf(doc)), null, 'generation is deterministic')
  const changed = JSON.parse(JSON.stringify(doc).replace('"type":"integer"', '"type":"string"')) as OpenAPI3
  const difference = firstDifference(before, await typesOf(changed))
  assert.ok(difference !== null && difference.checkedIn.includes('n?: number') && difference.generated.includes('n?: string'), JSON.stringify(difference))
})

// compile-time: the client's event names are schemas/events.ts's, each payload with the same fields, and each
// fits the service's type (the client's may be narrower: the document keeps enums the service's TypeBox
// types widen to string, e.g. connection-status's `status`)
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false
type SamePayload<E extends EventName> = E extends keyof EventPayloads
  ? (Equal<keyof EventPayloads[E], keyof Omit<EventPayload<E>, 'eventId'>> extends true ? ([Omit<EventPayload<E>, 'eventId'>] extends [EventPayloads[E]] ? true : false) : false)
  : false
const sameNames: Equal<EventName, keyof EventPayloads> = true
const samePayloads: Equal<{ [E in EventName]: SamePayload<E> }, Record<EventName, true>> = true

test('the client types every socket.io event of schemas/events.ts, each from its OpenAPI component', async (t) => {
  assert.ok(sameNames && samePayloads)
  const { app } = await build(t)
  const doc = (await app.inject({ url: '/docs/json' })).json() as { components: { schemas: Record<string, unknown> } }
  const components = Object.keys(doc.components.schemas).filter((name) => name.startsWith('Event')).sort()
  const pascal = (name: string): string => 'Event' + name.split('-').map((w) => w[0].toUpperCase() + w.slice(1)).join('')
  assert.deepEqual(components, Object.keys(EventSchemas).map(pascal).sort(), 'one Event* component per event, and no other component named Event*')
})
