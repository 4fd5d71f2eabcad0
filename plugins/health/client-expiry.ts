import type { FastifyInstance } from 'fastify'

// The date the platform announced it stops accepting the client build the service runs (`<ib><client_expiration>`,
// oxidezap/whatsapp-rust PR #1314, 2026-08-16; src/platform/notices.ts): after it every session is refused, as the
// wave of 405 refusals before Baileys 6.7.24 (July 2026) showed. /api/health shows it (`checks.platform.clientExpiresAt`)
// and is degraded from CLIENT_EXPIRY_WARN_DAYS before it; a warning is logged once a day meanwhile.

type ExpiryPlatform = Pick<FastifyInstance['platform'], 'clientExpiration'>

/** How often the warning window is looked at; the warning itself is logged at most once a day. */
const LOOK_EVERY_MS = 3_600_000
const DAY_MS = 86_400_000

export interface ClientExpiryView {
  /** the earliest announced date, ISO; null when no running session was told one */
  clientExpiresAt: string | null
  /** within CLIENT_EXPIRY_WARN_DAYS of it (or past it): the service is degraded */
  clientExpiresSoon: boolean
}

export function clientExpiryView (platform: ExpiryPlatform, warnMs: number, now = Date.now()): ClientExpiryView {
  const found = platform.clientExpiration()
  if (found === null) return { clientExpiresAt: null, clientExpiresSoon: false }
  return { clientExpiresAt: found.expiresAt.toISOString(), clientExpiresSoon: found.expiresAt.getTime() - now <= warnMs }
}

/**
 * Logs a warning when the announced date comes within the window, then once a day while it stays there
 * (checked hourly; the timer never keeps the process alive). Returns the function that stops it.
 */
export function warnDaily (app: Pick<FastifyInstance, 'log'> & { platform: ExpiryPlatform }, warnMs: number): () => void {
  let lastWarned = -Infinity
  const look = (): void => {
    const view = clientExpiryView(app.platform, warnMs)
    if (!view.clientExpiresSoon) { lastWarned = -Infinity; return }
    if (Date.now() - lastWarned < DAY_MS) return
    lastWarned = Date.now()
    app.log.warn({ clientExpiresAt: view.clientExpiresAt }, 'the platform stops accepting this client build soon: upgrade Baileys or WA_VERSION before then (docs/platform.md)')
  }
  const timer = setInterval(look, LOOK_EVERY_MS)
  timer.unref()
  // the first look once sessions had a chance to hear it after a restart (restored from their creds at start)
  const first = setTimeout(look, 5000)
  first.unref()
  return () => { clearInterval(timer); clearTimeout(first) }
}
