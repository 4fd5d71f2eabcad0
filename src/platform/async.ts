/** Runs tasks one after another; a failed task does not stop the ones queued behind it. */
export class SerialQueue {
  #tail: Promise<unknown> = Promise.resolve()

  run<T> (task: () => Promise<T>): Promise<T> {
    const result = this.#tail.then(task, task)
    this.#tail = result.catch(() => undefined)
    return result
  }
}

/** Exponential backoff with jitter: base × 2^attempt, capped at max, plus up to 25 % random on top (still ≤ max). */
export function backoffDelay (attempt: number, baseMs: number, maxMs: number, random: () => number = Math.random): number {
  const ceiling = Math.min(maxMs, baseMs * 2 ** Math.min(attempt, 30))
  return Math.round(Math.min(maxMs, ceiling * (1 + random() * 0.25)))
}

export const sleep = async (ms: number): Promise<void> => await new Promise((resolve) => setTimeout(resolve, ms))

/** `promise`, or a rejection with `message` after `ms` (the timer never keeps the process alive). */
export async function withTimeout<T> (promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms)
    timer.unref()
  })
  try {
    return await Promise.race([promise, timeout])
  } finally {
    clearTimeout(timer)
  }
}

/** Waits for a condition that can change whenever `notify()` is called (a session's state, its socket). */
export class Waiters {
  readonly #checks = new Set<() => void>()

  notify (): void {
    for (const check of [...this.#checks]) check()
  }

  /** Resolves with `probe()`'s first defined value, re-checked on every notify; probe may throw to abort. */
  async until<T> (probe: () => T | undefined, timeoutMs: number, what: string): Promise<T> {
    return await new Promise<T>((resolve, reject) => {
      const done = (): void => {
        clearTimeout(timer)
        this.#checks.delete(check)
      }
      const check = (): void => {
        try {
          const value = probe()
          if (value === undefined) return
          done()
          resolve(value)
        } catch (err) {
          done()
          reject(err)
        }
      }
      const timer = setTimeout(() => {
        done()
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`))
      }, timeoutMs)
      this.#checks.add(check)
      check()
    })
  }
}
