import type { BaseLogger, Bindings, ChildLoggerOptions } from 'pino'

/**
 * What the platform needs of a logger: a pino Logger, or Fastify's `app.log` (the same shape, spelled
 * without importing Fastify here).
 */
export interface PlatformLogger extends Pick<BaseLogger, 'level' | 'info' | 'error' | 'debug' | 'fatal' | 'warn' | 'trace' | 'silent'> {
  child: (bindings: Bindings, options?: ChildLoggerOptions) => PlatformLogger
}

const LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal'] as const

/** Baileys logs a lot at info; it runs one level quieter than the service (info → warn). */
export function quieter (level: string): string {
  const i = LEVELS.indexOf(level as typeof LEVELS[number])
  return i === -1 ? level : LEVELS[Math.min(i + 1, LEVELS.length - 1)]
}
