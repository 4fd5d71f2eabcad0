import { AjvCompiler } from '@fastify/ajv-compiler'
import type { FastifyServerOptions } from 'fastify'
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler'

type BuildValidator = NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>['buildValidator']
/** What Fastify really passes to a validator compiler (the pool's published types say a bare schema). */
type Compile = (route: { schema: unknown, method: string, url: string, httpPart?: string }) => unknown
type Pool = (externalSchemas: unknown, options: { customOptions?: Record<string, unknown> }) => Compile

/**
 * Two Ajv instances with the app's options: query strings, params and headers (always text) are
 * converted to the schema's types; JSON bodies are not (`"font": "3"` or `"targetNumbers": ["…"]` is a
 * 400, as the OpenAPI document says, never silently turned into something else).
 */
export function strictBodyValidator (): BuildValidator {
  const pool = AjvCompiler() as unknown as Pool
  const factory: Pool = (externalSchemas, options) => {
    const coercing = pool(externalSchemas, options)
    const strict = pool(externalSchemas, { ...options, customOptions: { ...options.customOptions, coerceTypes: false } })
    return (route) => route.httpPart === 'body' ? strict(route) : coercing(route)
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
export function cachedSerializer (): BuildSerializer {
  const pool = SerializerSelector() as unknown as SerializerPool
  const factory: SerializerPool = (externalSchemas, options) => {
    const compile = pool(externalSchemas, options)
    const compiled = new WeakMap<object, unknown>()
    return (route) => {
      let fn = compiled.get(route.schema)
      if (fn === undefined) {
        fn = compile(route)
        compiled.set(route.schema, fn)
      }
      return fn
    }
  }
  return factory as unknown as BuildSerializer
}
