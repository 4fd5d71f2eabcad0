// The receipt turns of every session, committed together (receipts.ts holds each session's turn).

/**
 * The sessions with receipts in this event-loop turn, committed at one setImmediate: each hands its turn to
 * the sink in the same synchronous run, so the sink can make them all one transaction (viewer-ingest.ts).
 * Spread over 1,000 sessions, a storm brings a frame or two per session per turn; a commit per session
 * was a transaction, an event-log read and a lock round per receipt or two. A session waits here once per
 * turn (its intake starts a turn only when it has none).
 */
let waitingTurns: Array<() => void> = []
export function turnWaiting (commit: () => void): void {
  if (waitingTurns.length === 0) setImmediate(commitTurns)
  waitingTurns.push(commit)
}
function commitTurns (): void {
  const commits = waitingTurns
  waitingTurns = []
  let failed: { err: unknown } | undefined
  for (const commit of commits) {
    // one session's failure does not keep the others' receipts from their commit
    try { commit() } catch (err) { failed ??= { err } }
  }
  if (failed !== undefined) throw failed.err
}
