/** Runs tasks one after another; a failed task does not stop the ones queued behind it. */
export class SerialQueue {
  #tail: Promise<unknown> = Promise.resolve()

  run<T> (task: () => Promise<T>): Promise<T> {
    const result = this.#tail.then(task, task)
    this.#tail = result.catch(() => undefined)
    return result
  }

  /** resolves once everything queued so far has finished */
  async idle (): Promise<void> {
    await this.#tail
  }
}

/** Exponential backoff with jitter: attempt 0 → about base, doubling up to max; half fixed, half random. */
export function backoffDelay (attempt: number, baseMs: number, maxMs: number, random: () => number = Math.random): number {
  const ceiling = Math.min(maxMs, baseMs * 2 ** Math.min(attempt, 30))
  return Math.round(ceiling / 2 + random() * ceiling / 2)
}

export const sleep = async (ms: number): Promise<void> => await new Promise((resolve) => setTimeout(resolve, ms))

/** A promise with its settle functions, for "wait until X happens" handshakes. */
export interface Deferred<T> {
  promise: Promise<T>
  resolve: (value: T) => void
  reject: (err: Error) => void
  settled: boolean
}

export function deferred<T> (): Deferred<T> {
  let resolve!: (value: T) => void
  let reject!: (err: Error) => void
  const promise = new Promise<T>((res, rej) => { resolve = res; reject = rej })
  promise.catch(() => undefined)
  const d: Deferred<T> = {
    promise,
    settled: false,
    resolve: (v) => { if (!d.settled) { d.settled = true; resolve(v) } },
    reject: (e) => { if (!d.settled) { d.settled = true; reject(e) } }
  }
  return d
}

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
