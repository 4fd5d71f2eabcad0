/**
 * The service's speed tricks (docs/architecture.md, habit 9): each named, with why it is there, the bench/NOTES.md
 * section that measures it, and what turning it off does. SPEED_TRICKS_OFF (comma-separated names, or
 * `all`) turns them off: each then takes the plain path, which answers the same, only slower
 * (test/foundation/speed-tricks-off.test.ts runs the tests that cover them again with every trick off).
 * docs/benchmarks.md "Speed tricks" lists the same, and the tricks that have no switch and why.
 */
export interface SpeedTrickInfo {
  /** one line: what it saves */
  why: string
  /** the heading (and the part under it) in bench/NOTES.md that measures it */
  measured: string
  /** what the service does instead with the trick off */
  off: string
}

export const SPEED_TRICKS = {
  'burst-gc': {
    why: 'one full garbage collection once a burst of ≥ 1,000 receipt frames is over, so the garbage it promoted is given back within seconds',
    measured: '"Memory after a burst (issue 25; ≤ 1.5 × idle within 5 s)"',
    off: 'no forced collection: V8 collects when it chooses'
  },
  'deferred-compiles': {
    why: 'route schemas compile on their first use and the rest 10 s after the server listens, so it answers sooner after a start',
    measured: '"Start with 100 sessions (re-measured for issue 14)"',
    off: 'every route schema compiles while the app gets ready, before it listens (a schema that does not compile fails the start)'
  },
  'kept-statements': {
    why: "SQLite statements stay prepared: Kysely's by SQL text (its driver prepares every query again), and the sent-statuses list and the sessions list are each one prepared statement read as arrays, so a list costs the same whatever the reach and less per request",
    measured: '"Where the 500-status list went"',
    off: "Kysely's own driver (each query's text prepared on every run) and both lists through Kysely"
  },
  'pieced-json': {
    why: 'a long list (GET …/sent-statuses, the sessions of GET /api/stats) is serialised item by item in pieces of 32 K characters written into one Buffer, so no answer is one string over V8\'s 128 KiB large-object size, which cost ~1 ms more CPU per 177 KB answer to place, flatten and write (kernel time included)',
    measured: '"The list in pieces"',
    off: "the route's response schema serialises the whole answer as one string"
  },
  'shared-key-transactions': {
    why: "every socket's Signal key transactions share one AsyncLocalStorage instead of one per socket, so on Node 20 and 22 a promise costs the same whatever the number of sessions",
    measured: '"Cost per promise with N sessions (issue 33)"',
    off: "Baileys' own addTransactionCapability: one AsyncLocalStorage per socket, each visited for every promise of the process"
  }
} as const satisfies Record<string, SpeedTrickInfo>

export type SpeedTrick = keyof typeof SPEED_TRICKS
export const SPEED_TRICK_NAMES = Object.keys(SPEED_TRICKS) as SpeedTrick[]

/**
 * SPEED_TRICKS_OFF's value: the tricks turned off (`all`: every one; unset or empty: none), and the
 * names that are no trick (the caller refuses to start on any).
 */
export function parseSpeedTricksOff (value: string | undefined): { off: ReadonlySet<SpeedTrick>, unknown: string[] } {
  const names = (value ?? '').split(',').map((s) => s.trim()).filter((s) => s !== '')
  const isTrick = (n: string): n is SpeedTrick => Object.hasOwn(SPEED_TRICKS, n)
  const unknown = names.filter((n) => n !== 'all' && !isTrick(n))
  return { off: new Set(names.includes('all') ? SPEED_TRICK_NAMES : names.filter(isTrick)), unknown }
}
