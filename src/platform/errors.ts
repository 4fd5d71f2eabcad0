// The platform's own failures. It knows nothing of HTTP: src/errors.ts maps each code to an answer.

export type PlatformErrorCode =
  | 'SESSION_NOT_FOUND'
  | 'NOT_CONNECTED'
  | 'ALREADY_CONNECTED'
  | 'PHONE_NOT_SET'
  | 'PAIRING_IN_PROGRESS'
  | 'PAIRING_UNAVAILABLE'
  | 'SEND_FAILED'
  /** the installed Baileys breaks an assumption of baileys/assumptions.ts: no session starts */
  | 'PLATFORM_INCOMPATIBLE'

// Worded for people: they reach pairing-code-error events and send failures as written.
const MESSAGES: Record<PlatformErrorCode, string> = {
  SESSION_NOT_FOUND: 'Session not found',
  NOT_CONNECTED: 'WhatsApp is not connected',
  ALREADY_CONNECTED: 'Session is already connected',
  PHONE_NOT_SET: 'Phone number not set for this session',
  PAIRING_IN_PROGRESS: 'Pairing code request already in progress',
  PAIRING_UNAVAILABLE: 'Cannot generate pairing code at this time',
  SEND_FAILED: 'Failed to send status',
  PLATFORM_INCOMPATIBLE: 'Sessions cannot start: the installed Baileys is not compatible; see UPGRADING.md'
}

export class PlatformError extends Error {
  readonly code: PlatformErrorCode

  /** `detail` replaces the default message; for SEND_FAILED it is the cause as the platform gave it */
  constructor (code: PlatformErrorCode, detail?: string) {
    super(detail ?? MESSAGES[code])
    this.name = 'PlatformError'
    this.code = code
  }
}

export function isPlatformError (err: unknown, code?: PlatformErrorCode): err is PlatformError {
  return err instanceof PlatformError && (code === undefined || err.code === code)
}
