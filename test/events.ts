// The one event recorder of the suite: platform events, domain events and socket.io events are all
// recorded in order with their arrival time, and every wait is bounded.

export interface RecordedEvent<M> { event: keyof M & string, payload: unknown, at: number }

export class EventRecorder<M extends object> {
  readonly seen: Array<RecordedEvent<M>> = []
  readonly #listeners = new Set<() => void>()

  record (event: keyof M & string, payload: unknown): void {
    this.seen.push({ event, payload, at: Date.now() })
    for (const listener of [...this.#listeners]) listener()
  }

  /** position to wait from */
  mark (): number {
    return this.seen.length
  }

  all<K extends keyof M & string>(event: K, where: (p: M[K]) => boolean = () => true, since = 0): Array<M[K]> {
    return this.seen.slice(since).filter((r) => r.event === event).map((r) => r.payload as M[K]).filter(where)
  }

  /** the first matching event recorded at or after `since`, waiting up to `timeoutMs` for it */
  async first<K extends keyof M & string>(event: K, where: (p: M[K]) => boolean, since: number, timeoutMs: number, what = `event ${event}`): Promise<M[K]> {
    return await this.#wait(() => this.all(event, where, since)[0], timeoutMs, what)
  }

  /** the latest matching event, waiting up to `timeoutMs` for one */
  async latest<K extends keyof M & string>(event: K, where: (p: M[K]) => boolean, timeoutMs: number, what = `event ${event}`): Promise<M[K]> {
    return await this.#wait(() => this.all(event, where).at(-1), timeoutMs, what)
  }

  async #wait<T>(probe: () => T | undefined, timeoutMs: number, what: string): Promise<T> {
    return await new Promise((resolve, reject) => {
      const check = (): void => {
        const found = probe()
        if (found === undefined) return
        done()
        resolve(found)
      }
      const done = (): void => { clearTimeout(timer); this.#listeners.delete(check) }
      const timer = setTimeout(() => { done(); reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)) }, timeoutMs)
      this.#listeners.add(check)
      check()
    })
  }
}
