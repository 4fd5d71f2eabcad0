/**
 * `tsx emulator/src/make-cert.ts <dir>`: write `<dir>/cert.pem` and `<dir>/key.pem` (self-signed,
 * CA:true, SAN IP:127.0.0.1 + DNS:localhost) unless both exist. Run before node starts so that
 * NODE_EXTRA_CA_CERTS can point at the certificate.
 */
import { join, resolve } from 'node:path'
import { ensureTlsFiles } from './certs.js'

const dir = process.argv[2]
if (!dir) {
  console.error('usage: tsx emulator/src/make-cert.ts <dir>')
  process.exit(2)
}
const { certFile, keyFile } = await ensureTlsFiles({ certFile: join(resolve(dir), 'cert.pem'), keyFile: join(resolve(dir), 'key.pem') })
console.log(JSON.stringify({ certFile, keyFile }))
