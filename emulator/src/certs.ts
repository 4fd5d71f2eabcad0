/**
 * Key material the emulator presents: the Noise certificate chain (signed by the emulator's root
 * Curve25519 key, which the process under test pins via `WA_CERT_DETAILS.PUBLIC_KEY.set(root)`)
 * and the self-signed TLS certificate of the media server.
 */
import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { proto, WA_CERT_DETAILS } from '@whiskeysockets/baileys'
import { generate } from 'selfsigned'
import { generateSigningKeyPair, type SigningKeyPair } from './xeddsa.js'

let sharedRoot: SigningKeyPair | undefined

/**
 * The process-wide default root. Baileys pins one root per process, so every emulator started in
 * one process shares it unless given its own `root`.
 */
export function defaultRootKeyPair (): SigningKeyPair {
  sharedRoot ??= generateSigningKeyPair()
  return sharedRoot
}

/** CertChain{intermediate signed by root, leaf (the server's static Noise key) signed by intermediate}. */
export function buildCertChain (root: SigningKeyPair, serverStaticPublic: Uint8Array, now = Date.now()): Uint8Array {
  const Details = proto.CertChain.NoiseCertificate.Details
  const intermediate = generateSigningKeyPair()
  const t = Math.floor(now / 1000)
  const intermediateDetails = Details.encode({
    serial: 1,
    issuerSerial: WA_CERT_DETAILS.SERIAL,
    key: intermediate.public,
    notBefore: t - 3600,
    notAfter: t + 30 * 86400
  }).finish()
  const leafDetails = Details.encode({
    serial: 2,
    issuerSerial: 1,
    key: serverStaticPublic,
    notBefore: t - 3600,
    notAfter: t + 30 * 86400
  }).finish()
  return proto.CertChain.encode({
    intermediate: { details: intermediateDetails, signature: root.sign(intermediateDetails) },
    leaf: { details: leafDetails, signature: intermediate.sign(leafDetails) }
  }).finish()
}

export interface TlsMaterial {
  cert: string
  key: string
  certFile: string
  keyFile: string
  /** set when the files live in a directory made for them (remove it when done) */
  temporaryDir?: string
}

export interface TlsFiles {
  certFile: string
  keyFile: string
}

async function generateTlsPems (): Promise<{ cert: string, key: string }> {
  const notBeforeDate = new Date(Date.now() - 24 * 3600 * 1000)
  const notAfterDate = new Date(Date.now() + 5 * 365 * 24 * 3600 * 1000)
  const pems = await generate([{ name: 'commonName', value: 'status-tracker emulator (127.0.0.1)' }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    notBeforeDate,
    notAfterDate,
    extensions: [
      { name: 'basicConstraints', cA: true, critical: true },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, keyCertSign: true },
      { name: 'extKeyUsage', serverAuth: true },
      {
        name: 'subjectAltName',
        altNames: [
          { type: 7, ip: '127.0.0.1' },
          { type: 2, value: 'localhost' }
        ]
      }
    ]
  })
  return { cert: pems.cert, key: pems.private }
}

/** Reuse `certFile`/`keyFile` if both exist, else generate a new pair and write it there. */
export async function ensureTlsFiles (files: TlsFiles): Promise<TlsMaterial> {
  const certFile = resolve(files.certFile)
  const keyFile = resolve(files.keyFile)
  if (existsSync(certFile) && existsSync(keyFile)) {
    const [cert, key] = await Promise.all([readFile(certFile, 'utf8'), readFile(keyFile, 'utf8')])
    return { cert, key, certFile, keyFile }
  }
  const { cert, key } = await generateTlsPems()
  await mkdir(dirname(certFile), { recursive: true })
  await mkdir(dirname(keyFile), { recursive: true })
  await writeFile(keyFile, key, { mode: 0o600 })
  await writeFile(certFile, cert)
  return { cert, key, certFile, keyFile }
}

/** A fresh certificate in a new temporary directory. */
export async function temporaryTlsFiles (): Promise<TlsMaterial> {
  const dir = await mkdtemp(join(tmpdir(), 'wa-emulator-'))
  return { ...(await ensureTlsFiles({ certFile: join(dir, 'cert.pem'), keyFile: join(dir, 'key.pem') })), temporaryDir: dir }
}

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..')

/** Absolute paths of the certificate the test suite generates before node starts (`test/.certs`). */
export function testCertPaths (): TlsFiles {
  return {
    certFile: join(REPO_ROOT, 'test', '.certs', 'cert.pem'),
    keyFile: join(REPO_ROOT, 'test', '.certs', 'key.pem')
  }
}
