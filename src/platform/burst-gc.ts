import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'

// Memory after a burst of receipts (issue 25). 20,000 receipts arrive in two or three event-loop turns of
// thousands of frames each, held until their commit and then acked over the following turns: most of what
// a burst allocates lives through two young-generation collections and is promoted, so V8's old generation
// grows by ~130 MB of garbage (the live heap grows by ~11 MB). Nothing then makes V8 collect it: no more
// allocation to reach its limit, and its memory reducer starts only after a full collection. The RSS stayed
// at ~1.8 × idle until the next traffic (bench/NOTES.md). One full collection once a burst is over gives it
// back: ~1.3 × idle within 5 s of the burst's end, for one pause (83–122 ms with the machine's load at 8) while
// no receipts come.

/** a turn of at least this many receipt frames is a burst */
export const BURST_FRAMES = 1000
/**
 * the collection runs once no receipts came for this long after a burst: any turn of receipts postpones
 * it, so its pause never lands in traffic (under steady traffic V8 collects as it allocates anyway)
 */
export const QUIET_MS = 1000

let collect: (() => void) | null | undefined
/** V8's full collection (`gc()`), exposed for this process the way `--expose-gc` does, once */
function fullGc (): (() => void) | null {
  if (collect === undefined) {
    try {
      setFlagsFromString('--expose-gc')
      collect = runInNewContext('gc') as () => void
    } catch {
      collect = null
    }
  }
  return collect
}

let timer: NodeJS.Timeout | null = null

/**
 * The acks of a turn of `frames` receipt frames went out: after a burst, one full collection once no
 * receipts came for `quietMs`. null: never (the burst-gc speed trick off, src/speed-tricks.ts).
 */
export function afterReceiptTurn (frames: number, quietMs: number | null): void {
  if (quietMs === null || (frames < BURST_FRAMES && timer === null)) return
  if (timer !== null) clearTimeout(timer)
  timer = setTimeout(() => { timer = null; fullGc()?.() }, quietMs)
  timer.unref()
}
