import assert from 'node:assert/strict'
import { test } from 'node:test'
import fc from 'fast-check'
import { build } from '../helper.js'

// Issue 41: a schema-driven fuzzer found `?after=1e309` (Infinity) answering 500, `after=+` and
// `limit=0x10` taken as numbers, and 23 operations answering 414 for an over-long path parameter. Every
// operation of the OpenAPI document is walked here (a new route is covered without touching this file):
// each query parameter gets the forms below and must answer a 4xx envelope naming it (integer parameters:
// always 400; others: never 5xx); each path parameter over-long must answer 400 naming it.

type Schema = Record<string, unknown>
interface Param { name: string, in: string, schema: Schema }
interface Operation { method: string, path: string, params: Param[], responses: Record<string, unknown> }

const BAD_INTEGERS = ['1e309', '1e3', '+', '+1', '0x10', '-1', '1.5', 'Infinity', '-Infinity', 'NaN', ' 1', '1 ', '', '123456789012345678901234567890', '9007199254740993', '0b1', '1_0']
/** Over-long path parameters: one past the schema's limit (or the router's old one, 100) and a long one (a URL Node's parser still takes). */
const longs = (schema: Schema): number[] => [Math.max(Number(schema.maxLength ?? 0), 100) + 1, 2000]

function operations (doc: Schema): Operation[] {
  const out: Operation[] = []
  for (const [path, ops] of Object.entries(doc.paths as Record<string, Record<string, Schema>>)) {
    for (const [method, op] of Object.entries(ops)) {
      out.push({ method: method.toUpperCase(), path, params: (op.parameters ?? []) as Param[], responses: op.responses as Record<string, unknown> })
    }
  }
  return out
}

/** A value the parameter's schema accepts (path parameters: a session id, a numeric id, a phone number…). */
function goodValue (schema: Schema): string {
  if (Array.isArray(schema.enum)) return String(schema.enum[0])
  if (schema.type === 'integer' || schema.type === 'number') return String(schema.minimum ?? 1)
  const pattern = typeof schema.pattern === 'string' ? new RegExp(schema.pattern) : /^[a-z0-9]+$/
  const fits = (v: string): boolean => pattern.test(v) && v.length >= Number(schema.minLength ?? 1) && v.length <= Number(schema.maxLength ?? 64)
  const known = ['s1', '1', '4915100000011'].find(fits)
  if (known !== undefined) return known
  // any other id (aud_…, sch_…, 16 hex digits): one string the pattern takes, the same in every run
  const [sample] = fc.sample(fc.stringMatching(pattern).filter(fits), { numRuns: 1, seed: 41 })
  return sample
}

function url (op: Operation, path: Record<string, string> = {}, query = ''): string {
  const filled = op.path.replace(/\{(\w+)\}/g, (_m, name: string) => path[name] ?? goodValue(op.params.find((p) => p.in === 'path' && p.name === name)?.schema ?? {}))
  return query === '' ? filled : `${filled}?${query}`
}

function assertNamed (op: Operation, res: { statusCode: number, body: string }, what: string, field: string, exact400: boolean): void {
  assert.ok(res.statusCode >= 400 && res.statusCode < 500, `${what} → ${res.statusCode} ${res.body}`)
  // the code is one the operation's OpenAPI entry lists
  assert.ok(op.responses[String(res.statusCode)] !== undefined, `${what} → ${res.statusCode}, not in the document's responses`)
  if (exact400) assert.equal(res.statusCode, 400, `${what} → ${res.statusCode} ${res.body}`)
  const body = JSON.parse(res.body) as { success: boolean, error: string }
  assert.equal(body.success, false, what)
  if (exact400) assert.match(body.error, new RegExp(`\\b${field.replace('.', '\\.')}\\b`), `${what}: ${body.error}`)
}

test('bad numbers: every integer query parameter of every operation takes decimal digits only (400 naming it, never 500)', async (t) => {
  const { app, api } = await build(t, { RATE_LIMIT_MAX: '100000' })
  const doc = (await app.inject({ url: '/docs/json' })).json<Schema>()
  // an existing session: handlers past the session look-up are reached when validation lets a value through
  assert.equal((await api({ method: 'POST', url: '/api/sessions', payload: { sessionId: 's1', sessionName: 'One', authMethod: 'qrcode' } })).statusCode, 200)
  let integers = 0
  let others = 0
  for (const op of operations(doc)) {
    for (const param of op.params.filter((p) => p.in === 'query')) {
      const integer = param.schema.type === 'integer'
      if (integer) integers++; else others++
      for (const form of BAD_INTEGERS) {
        // a free-text or enum parameter may accept some forms: it must still never answer 5xx
        const res = await api({ method: op.method as 'GET', url: url(op, {}, `${param.name}=${encodeURIComponent(form)}`), payload: op.method === 'GET' || op.method === 'DELETE' ? undefined : {} })
        const what = `${op.method} ${op.path} ?${param.name}=${JSON.stringify(form)}`
        if (integer) assertNamed(op, res, what, `querystring.${param.name}`, true)
        else assert.ok(res.statusCode < 500, `${what} → ${res.statusCode} ${res.body}`)
      }
      if (integer) {
        // the number itself still goes through, and the document says what it may be
        assert.equal(typeof param.schema.minimum, 'number', `${op.path} ${param.name}: a minimum in the document`)
        assert.equal(typeof param.schema.maximum, 'number', `${op.path} ${param.name}: a maximum in the document`)
        const ok = await api({ method: op.method as 'GET', url: url(op, {}, `${param.name}=${String(param.schema.minimum)}`) })
        assert.notEqual(ok.statusCode, 400, `${op.method} ${op.path} ?${param.name}=${String(param.schema.minimum)} → ${ok.body}`)
      }
    }
  }
  // the walk reached the parameters the fuzzer found (after, limit) and the rest
  assert.ok(integers >= 6, `integer query parameters walked: ${integers}`)
  assert.ok(others >= 5, `other query parameters walked: ${others}`)
})

test('bad numbers: every path parameter over-long answers 400 naming it (no 414)', async (t) => {
  const { app, api } = await build(t, { RATE_LIMIT_MAX: '100000' })
  const doc = (await app.inject({ url: '/docs/json' })).json<Schema>()
  let walked = 0
  for (const op of operations(doc)) {
    for (const param of op.params.filter((p) => p.in === 'path')) {
      walked++
      for (const length of longs(param.schema)) {
        const res = await api({ method: op.method as 'GET', url: url(op, { [param.name]: 'a'.repeat(length) }) })
        assertNamed(op, res, `${op.method} ${op.path} ${param.name} × ${length}`, `params.${param.name}`, true)
      }
    }
  }
  assert.ok(walked >= 23, `path parameters walked: ${walked}`)
})
