import type { BaseLogger, Bindings, ChildLoggerOptions } from 'pino'

/**
 * What the platform needs of a logger: a pino Logger, or Fastify's `app.log` (the same shape, spelled
 * without importing Fastify here).
 */
export interface PlatformLogger extends Pick<BaseLogger, 'level' | 'info' | 'error' | 'debug' | 'fatal' | 'warn' | 'trace' | 'silent'> {
  child: (bindings: Bindings, options?: ChildLoggerOptions) => PlatformLogger
}
