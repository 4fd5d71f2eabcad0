import { EventEmitter } from 'node:events'
import type { PlatformLogger as Logger } from './logger.js'

type Listener<T> = (payload: T) => void

/** A typed event emitter whose listeners cannot break the code that emits (errors are logged). */
export class TypedEmitter<M extends object> {
  readonly #ee = new EventEmitter()
  readonly #logger: Logger

  constructor (logger: Logger) {
    this.#logger = logger
    this.#ee.setMaxListeners(0)
  }

  on<K extends keyof M & string> (event: K, listener: Listener<M[K]>): this {
    this.#ee.on(event, listener)
    return this
  }

  off<K extends keyof M & string> (event: K, listener: Listener<M[K]>): this {
    this.#ee.off(event, listener)
    return this
  }

  emit<K extends keyof M & string> (event: K, payload: M[K]): void {
    for (const listener of this.#ee.listeners(event) as Array<Listener<M[K]>>) {
      try {
        listener(payload)
      } catch (err) {
        this.#logger.error({ err, event }, 'platform event listener threw')
      }
    }
  }
}
