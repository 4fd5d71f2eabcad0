/**
 * Loopback emulator of the WhatsApp Web server for driving the real, unpatched Baileys in tests.
 * See emulator/README.md.
 */
export { startEmulator, type Emulator } from './emulator.js'
export { EmulatorError } from './errors.js'
export { defaultRootKeyPair, ensureTlsFiles, testCertPaths, type TlsFiles } from './certs.js'
export { decodeQrDataUrl } from './qr-image.js'
export type { MediaUploadInfo } from './media-server.js'
export type { KeyPair } from './xeddsa.js'
export type * from './types.js'
export type * from './types-messages.js'
export type { DirectMessageRecord } from './status-mentions.js'
