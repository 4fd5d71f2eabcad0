import { setTrustRoot } from './baileys/index.js'
import type { PlatformLogger as Logger } from './logger.js'

let applied: string | null = null

/** TEST ONLY: the platform certificate root becomes WA_TEST_TRUST_ROOT (baileys/trust-root.ts). Process-wide. */
export function applyTestTrustRoot (rootBase64: string, logger: Logger): void {
  if (applied !== rootBase64) {
    setTrustRoot(Buffer.from(rootBase64, 'base64'))
    applied = rootBase64
  }
  logger.warn('WARNING: the platform certificate root is overridden by WA_TEST_TRUST_ROOT (test only); this process cannot talk to the real platform')
}
