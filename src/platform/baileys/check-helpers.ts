import type { Loaded } from './assumption.js'

// Helpers the checks of assumptions.ts and assumptions-status.ts share.

export type Fn = (...args: unknown[]) => unknown

export const isFunction = (value: unknown): value is Fn => typeof value === 'function'

/** a method on the class' prototype */
export const method = (cls: unknown, name: string): Fn | undefined => {
  const proto = isFunction(cls) ? (cls.prototype as Record<string, unknown> | undefined) : undefined
  const value = proto?.[name]
  return isFunction(value) ? value : undefined
}

/** the class' prototype has a getter `name` */
export const getter = (cls: unknown, name: string): boolean =>
  isFunction(cls) && isFunction(Object.getOwnPropertyDescriptor(cls.prototype as object, name)?.get)

/** every needle in the text, each after the one before */
export function inOrder (text: string, ...needles: string[]): boolean {
  let at = 0
  for (const needle of needles) {
    const found = text.indexOf(needle, at)
    if (found === -1) return false
    at = found + needle.length
  }
  return true
}

/** a logger that says nothing, in the shape Baileys calls */
export const silentLogger: Record<string, unknown> = { level: 'silent', trace () {}, debug () {}, info () {}, warn () {}, error () {} }
silentLogger.child = () => silentLogger

/** an empty key store with the calls Baileys makes on one (nothing is stored) */
export const emptyKeys = {
  get: async () => ({}), set: async () => {}, transaction: async (work: () => Promise<unknown>) => await work(), isInTransaction: () => false
}

/** one repository per loaded Baileys: fresh credentials cost ~50 ms of pure-JS curve signing each, and seven checks ask */
const repositories = new WeakMap<Loaded, Record<string, unknown> | undefined>()

/**
 * The signal repository the socket config of `loaded` builds (DEFAULT_CONNECTION_CONFIG.makeSignalRepository)
 * over fresh credentials and an empty key store; undefined when it cannot be built. Nothing is encrypted; the
 * checks only look at it, so they share one.
 */
export function signalRepositoryOf (l: Loaded): Record<string, unknown> | undefined {
  if (repositories.has(l)) return repositories.get(l)
  const config = l.baileys.DEFAULT_CONNECTION_CONFIG as { makeSignalRepository?: unknown } | undefined
  const make = config?.makeSignalRepository
  let repo: Record<string, unknown> | undefined
  if (isFunction(make) && isFunction(l.baileys.initAuthCreds)) {
    const made: unknown = make({ creds: l.baileys.initAuthCreds(), keys: emptyKeys }, silentLogger, async () => [])
    repo = typeof made === 'object' && made !== null ? made as Record<string, unknown> : undefined
  }
  repositories.set(l, repo)
  return repo
}
