import { redactValue } from './redact.js'

// Dependencies print to the console (libsignal: `console.info("Closing session:", session)` with the
// session's privKey and rootKey, 20-odd times per send after a reconnect). The service's stdout is JSON
// lines from pino and nothing else: console.* is routed into the logger at debug, key material redacted.

export interface ConsoleSink {
  debug: (obj: object, msg: string) => void
}

const METHODS = ['log', 'info', 'warn', 'error', 'debug', 'trace', 'dir'] as const
type Method = typeof METHODS[number]

/** Replaces console.* with the sink; returns the function that puts the originals back. */
export function routeConsole (sink: ConsoleSink): () => void {
  const originals = new Map<Method, (...args: unknown[]) => void>()
  for (const method of METHODS) {
    originals.set(method, console[method])
    console[method] = (...args: unknown[]) => {
      const isWord = (a: unknown) => typeof a === 'string' || typeof a === 'number' || typeof a === 'boolean'
      const words = args.filter(isWord)
      const rest = args.filter((a) => !isWord(a))
      const msg = words.map((w) => redactValue(w)).join(' ')
      try {
        sink.debug({ source: 'console', method, ...(rest.length > 0 ? { args: rest.map((a) => redactValue(a)) } : {}) }, msg === '' ? `console.${method}` : msg)
      } catch {
        // a logger failing must not break the library that printed
      }
    }
  }
  return () => {
    for (const [method, fn] of originals) console[method] = fn
  }
}
