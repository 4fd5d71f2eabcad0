import type { AuthenticationCreds } from '@whiskeysockets/baileys'

// What the server announced to the sessions about the client build itself (issue 39 item 5): the date it
// expects to stop accepting it (`<ib><client_expiration t/>`, oxidezap/whatsapp-rust PR #1314, 2026-08-16).
// Kept per session in memory and in the session's creds (the auth_creds row, written with the creds Baileys
// writes), stamped with the build it was announced for as whatsapp-rust records it "stamped with the build it
// was issued against": a restart still warns, and an upgraded build (another WA_VERSION or Baileys) forgets it.

/** The field of the stored creds that keeps the announced date (the service's own; Baileys carries it along). */
const CREDS_FIELD = 'statusTrackerClientExpiration'

interface StoredExpiration { t: number, build: string }

/** The announced date kept in `creds` for `build`, or null (none, or announced for another build). */
export function storedClientExpiration (creds: AuthenticationCreds, build: string): Date | null {
  const stored = (creds as unknown as Record<string, unknown>)[CREDS_FIELD] as Partial<StoredExpiration> | undefined
  if (typeof stored?.t !== 'number' || stored.build !== build) return null
  return new Date(stored.t * 1000)
}

/** Puts the announced date into `creds` (the caller saves them). */
export function keepClientExpiration (creds: AuthenticationCreds, expiresAt: Date, build: string): void {
  const value: StoredExpiration = { t: Math.floor(expiresAt.getTime() / 1000), build };
  (creds as unknown as Record<string, unknown>)[CREDS_FIELD] = value
}

/** The earliest announced client expiration, and which session heard it. */
export interface ClientExpiration { expiresAt: Date, sessionId: string }

/** Every running session's announced client expiration (this node's sessions). */
export class ClientExpirations {
  readonly #bySession = new Map<string, Date>()

  set (sessionId: string, expiresAt: Date): void {
    this.#bySession.set(sessionId, expiresAt)
  }

  forget (sessionId: string): void {
    this.#bySession.delete(sessionId)
  }

  /** the earliest announced by any session `counts` (default: all), null when none announced one */
  earliest (counts: (sessionId: string) => boolean = () => true): ClientExpiration | null {
    let best: ClientExpiration | null = null
    for (const [sessionId, expiresAt] of this.#bySession) {
      if (!counts(sessionId)) continue
      if (best === null || expiresAt.getTime() < best.expiresAt.getTime()) best = { expiresAt, sessionId }
    }
    return best
  }
}
