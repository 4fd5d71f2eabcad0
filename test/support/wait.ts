// The one way the suite and the benchmarks wait for something: poll a check until it holds, bounded, with
// a message naming what was awaited (so a timeout says which step failed).

export const sleep = async (ms: number): Promise<void> => { await new Promise((resolve) => setTimeout(resolve, ms)) }

/**
 * Polls `check` every `everyMs` until it returns a value other than undefined, null or false (and returns
 * that value), or throws after `timeoutMs`. A `check` that throws ends the wait with its error.
 */
export async function waitFor<T> (check: () => T | Promise<T>, timeoutMs = 10_000, what = 'condition', everyMs = 25): Promise<Exclude<T, undefined | null | false>> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await check()
    if (value !== undefined && value !== null && value !== false) return value as Exclude<T, undefined | null | false>
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await sleep(everyMs)
  }
}
