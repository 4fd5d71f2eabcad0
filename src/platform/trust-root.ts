import { WA_CERT_DETAILS } from '@whiskeysockets/baileys'
import type { PlatformLogger as Logger } from './logger.js'

let applied: string | null = null

/**
 * TEST ONLY. Baileys pins the platform's Noise certificate root in `WA_CERT_DETAILS.PUBLIC_KEY`, a
 * mutable module-level buffer; overwriting it lets a local emulator sign a real chain. Process-wide.
 */
export function applyTestTrustRoot (rootBase64: string, logger: Logger): void {
  const root = Buffer.from(rootBase64, 'base64')
  if (root.length !== WA_CERT_DETAILS.PUBLIC_KEY.length) {
    throw new Error(`WA_TEST_TRUST_ROOT must be a ${WA_CERT_DETAILS.PUBLIC_KEY.length}-byte key`)
  }
  if (applied !== rootBase64) {
    WA_CERT_DETAILS.PUBLIC_KEY.set(root)
    applied = rootBase64
  }
  logger.warn('WARNING: the platform certificate root is overridden by WA_TEST_TRUST_ROOT (test only); this process cannot talk to the real platform')
}
