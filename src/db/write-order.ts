/**
 * Writes per key (a session) that commit in the order they were made: each starts once the key's previous one
 * has settled, and a failed one does not stop the next (its caller gets the failure). A key with nothing
 * queued is forgotten. Used where the platform makes a session's changes faster than they commit (its links on
 * PostgreSQL, its phone's contacts).
 */
export function writeOrder () {
  const tails = new Map<string, Promise<void>>()
  return {
    run (key: string, write: () => Promise<void>): Promise<void> {
      const mine = (tails.get(key) ?? Promise.resolve()).then(write)
      const settled = mine.catch(() => {})
      tails.set(key, settled)
      void settled.then(() => { if (tails.get(key) === settled) tails.delete(key) })
      return mine
    },
    /** Settles once every write queued so far has. */
    async idle (): Promise<void> {
      await Promise.all([...tails.values()])
    }
  }
}
