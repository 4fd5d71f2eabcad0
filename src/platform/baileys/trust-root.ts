import { WA_CERT_DETAILS } from '@whiskeysockets/baileys'

/**
 * TEST ONLY. Baileys pins the platform's Noise certificate root in `WA_CERT_DETAILS.PUBLIC_KEY`, a mutable
 * module-level buffer; overwriting it lets a local emulator sign a real chain. Process-wide. Assumption
 * `noise-trust-root`.
 */
export function setTrustRoot (root: Uint8Array): void {
  if (root.length !== WA_CERT_DETAILS.PUBLIC_KEY.length) {
    throw new Error(`WA_TEST_TRUST_ROOT must be a ${WA_CERT_DETAILS.PUBLIC_KEY.length}-byte key`)
  }
  WA_CERT_DETAILS.PUBLIC_KEY.set(root)
}
