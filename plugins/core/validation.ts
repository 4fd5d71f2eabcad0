import { createRequire } from 'node:module'
import type { AjvCompiler as AjvCompilerType } from '@fastify/ajv-compiler'
import type { FastifyServerOptions } from 'fastify'
import type { SerializerSelector as SerializerSelectorType } from '@fastify/fast-json-stringify-compiler'

// Both compilers (and Ajv, fast-json-stringify under them) load on the first compile, which with the
// deferred compiles below is after the server listens: their modules are a good part of the start.
const require = createRequire(import.meta.url)
const ajvCompiler = (): typeof AjvCompilerType => (require('@fastify/ajv-compiler') as { AjvCompiler: typeof AjvCompilerType }).AjvCompiler
/** fast-json-stringify's compiler, loaded on first use (also by the pieced-json answers, pieced-json.ts) */
export const serializerSelector = (): typeof SerializerSelectorType =>
  (require('@fastify/fast-json-stringify-compiler') as { SerializerSelector: typeof SerializerSelectorType }).SerializerSelector

type BuildValidator = NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>['buildValidator']
/** What Fastify really passes to a validator compiler (the pool's published types say a bare schema). */
type Compile = (route: { schema: unknown, method: string, url: string, httpPart?: string }) => unknown
type Pool = (externalSchemas: unknown, options: { customOptions?: Record<string, unknown> }) => Compile

type Compiled = ((data: unknown) => unknown) & { errors?: unknown }

/**
 * Route schemas compiled after the server listens instead of before: Fastify compiles every route's
 * validators (Ajv) and serializers (fast-json-stringify) while it gets ready, a good part of the time
 * until the first answer (issue 14: < 1 s from spawn). Each compiled function here is a stand-in that
 * compiles on first use, and `warm` compiles the rest one per turn of the event loop once the server
 * listens, so requests interleave and a schema that fails to compile is reported right after the start.
 */
export function deferredCompiles () {
  const pending = new Set<() => Compiled>()
  let stopped = false
  return {
    lazy (compile: () => Compiled): Compiled {
      let fn: Compiled | undefined
      const get = (): Compiled => {
        pending.delete(get)
        fn ??= compile()
        return fn
      }
      pending.add(get)
      // validators report their failures on `.errors` of the function Fastify holds: copied over
      const standIn: Compiled = (data) => {
        // once compiled, no look-up in `pending` per call
        const real = fn ?? get()
        const result = real(data)
        standIn.errors = real.errors
        return result
      }
      return standIn
    },
    warm (onError: (err: unknown) => void): void {
      const step = (): void => {
        if (stopped) return
        // one per turn: a compile is tens of ms, and requests must not wait behind several
        const get = pending.values().next().value
        if (get === undefined) return
        try { get() } catch (err) { onError(err) }
        if (pending.size > 0) setImmediate(step)
      }
      setImmediate(step)
    },
    stop (): void { stopped = true }
  }
}
export type DeferredCompiles = ReturnType<typeof deferredCompiles>

/**
 * Two Ajv instances with the app's options: query strings, params and headers (always text) are
 * converted to the schema's types; JSON bodies are not (`"font": "3"` or `"targetNumbers": ["…"]` is a
 * 400, as the OpenAPI document says, never silently turned into something else).
 */
export function strictBodyValidator (deferred?: DeferredCompiles): BuildValidator {
  let made: Pool | undefined
  const pool: Pool = (externalSchemas, options) => (made ??= ajvCompiler()() as unknown as Pool)(externalSchemas, options)
  const factory: Pool = (externalSchemas, options) => {
    // made on first use: each Ajv instance (formats, shared schemas) costs tens of ms, which with the
    // deferred compiles is after the server listens
    let coercing: Compile | undefined
    let strict: Compile | undefined
    const compile: Compile = (route) => route.httpPart === 'body'
      ? (strict ??= pool(externalSchemas, { ...options, customOptions: { ...options.customOptions, coerceTypes: false } }))(route)
      : decimalOnly(route.schema, (coercing ??= pool(externalSchemas, options))(route) as Compiled)
    return deferred === undefined ? compile : (route) => deferred.lazy(() => compile(route) as Compiled)
  }
  return factory as unknown as BuildValidator
}

/** What a number in a URL or header may look like: decimal digits, a minus sign at most (the range is the schema's). */
const DECIMAL = /^-?[0-9]+$/
/** Ajv's coercion takes what `+text` takes; past the 16th digit a number is no longer exact. */
const MAX_DIGITS = 16

/**
 * Numbers in query strings, path parameters and headers are written in decimal digits, whatever the route:
 * Ajv's coercion (`coerceTypes`) turns any text JavaScript reads as a number into one, so `1e309` became
 * Infinity (a 500 from the serializer), `+` zero, `0x10` sixteen (issue 41). Every integer or number
 * property of the part's schema is checked here before Ajv sees it, so no route can forget it; the
 * schema's own minimum and maximum then apply, and the OpenAPI document still shows integers.
 */
function decimalOnly (schema: unknown, validate: Compiled): Compiled {
  const names = numericProperties(schema)
  if (names.length === 0) return validate
  // Fastify passes Ajv's own functions (schemaEnv) their parent as a second argument: handed on
  const checked: Compiled & { schemaEnv?: unknown } = (data, ...parent: unknown[]) => {
    if (data !== null && typeof data === 'object') {
      for (const name of names) {
        const value = (data as Record<string, unknown>)[name]
        const texts = Array.isArray(value) ? value : [value]
        if (texts.some((t) => typeof t === 'string' && (!DECIMAL.test(t) || t.replace('-', '').length > MAX_DIGITS))) {
          checked.errors = [{ instancePath: `/${name}`, schemaPath: '#/decimal', keyword: 'decimal', params: {}, message: `must be a whole number in decimal digits (at most ${MAX_DIGITS})` }]
          return false
        }
      }
    }
    const ok = (validate as (...args: unknown[]) => unknown)(data, ...parent)
    checked.errors = validate.errors
    return ok
  }
  checked.schemaEnv = (validate as { schemaEnv?: unknown }).schemaEnv
  return checked
}

/** The properties of an object schema whose type is (or may be) integer or number. */
function numericProperties (schema: unknown): string[] {
  const properties = (schema as { properties?: Record<string, unknown> } | undefined)?.properties ?? {}
  const numeric = (s: unknown): boolean => {
    const node = s as { type?: unknown, anyOf?: unknown[], oneOf?: unknown[] }
    const types = Array.isArray(node.type) ? node.type : [node.type]
    return types.includes('integer') || types.includes('number') || [...(node.anyOf ?? []), ...(node.oneOf ?? [])].some(numeric)
  }
  return Object.entries(properties).filter(([, s]) => s !== null && typeof s === 'object' && numeric(s)).map(([name]) => name)
}

type BuildSerializer = NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>['buildSerializer']
type CompileSerializer = (route: { schema: object, method: string, url: string, httpStatus: string }) => unknown
type SerializerPool = (externalSchemas: unknown, options: unknown) => CompileSerializer

/**
 * Fastify's own response serializer compiler (fast-json-stringify), compiling each schema object once.
 * Every route lists the same shared error schema for four to six status codes (`failures()`), and
 * Fastify compiles one serializer per route and code: without the cache, about 130 identical compiles
 * at every start. A serializer depends only on its schema and the shared schemas, so reuse is safe.
 */
export function cachedSerializer (deferred?: DeferredCompiles): BuildSerializer {
  const factory: SerializerPool = (externalSchemas, options) => {
    let made: CompileSerializer | undefined
    const compile: CompileSerializer = (route) => (made ??= (serializerSelector()() as unknown as SerializerPool)(externalSchemas, options))(route)
    const compiled = new WeakMap<object, unknown>()
    return (route) => {
      let fn = compiled.get(route.schema)
      if (fn === undefined) {
        fn = deferred === undefined ? compile(route) : deferred.lazy(() => compile(route) as Compiled)
        compiled.set(route.schema, fn)
      }
      return fn
    }
  }
  return factory as unknown as BuildSerializer
}
