import { AjvCompiler } from '@fastify/ajv-compiler'
import type { FastifyServerOptions } from 'fastify'
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler'

type BuildValidator = NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>['buildValidator']
/** What Fastify really passes to a validator compiler (the pool's published types say a bare schema). */
type Compile = (route: { schema: unknown, method: string, url: string, httpPart?: string }) => unknown
type Pool = (externalSchemas: unknown, options: { customOptions?: Record<string, unknown> }) => Compile

type Compiled = ((data: unknown) => unknown) & { errors?: unknown }

/**
 * Route schemas compiled after the server listens instead of before: Fastify compiles every route's
 * validators (Ajv) and serializers (fast-json-stringify) while it gets ready, a good part of the time
 * until the first answer (issue 14: < 1 s from spawn). Each compiled function here is a stand-in that
 * compiles on first use, and `warm` compiles the rest a few per turn of the event loop once the app is
 * ready, so requests interleave and a schema that fails to compile is reported right after the start.
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
        const real = get()
        const result = real(data)
        standIn.errors = real.errors
        return result
      }
      return standIn
    },
    warm (onError: (err: unknown) => void): void {
      const step = (): void => {
        if (stopped) return
        let n = 0
        for (const get of pending) {
          if (n++ === 4) break
          try { get() } catch (err) { onError(err) }
        }
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
  const pool = AjvCompiler() as unknown as Pool
  const factory: Pool = (externalSchemas, options) => {
    const coercing = pool(externalSchemas, options)
    const strict = pool(externalSchemas, { ...options, customOptions: { ...options.customOptions, coerceTypes: false } })
    const compile: Compile = (route) => route.httpPart === 'body' ? strict(route) : coercing(route)
    return deferred === undefined ? compile : (route) => deferred.lazy(() => compile(route) as Compiled)
  }
  return factory as unknown as BuildValidator
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
  const pool = SerializerSelector() as unknown as SerializerPool
  const factory: SerializerPool = (externalSchemas, options) => {
    const compile = pool(externalSchemas, options)
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
