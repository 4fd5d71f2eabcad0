import { AjvCompiler } from '@fastify/ajv-compiler'
import type { FastifyServerOptions } from 'fastify'

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
