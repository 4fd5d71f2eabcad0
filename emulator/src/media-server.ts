/**
 * The media host (`mmg.whatsapp.net` stand-in) Baileys uploads encrypted media to:
 * `POST /mms/<type>/<encSha256 b64url>?auth=…&token=…` → `{ url, direct_path }`, and GET of the
 * stored blob at that path. Also decrypts an upload given the message's mediaKey.
 */
import { createDecipheriv, createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import { createServer, type Server } from 'node:https'
import type { AddressInfo } from 'node:net'
import { getMediaKeys, type MediaType } from '@whiskeysockets/baileys'
import type { Logger } from 'pino'

const MAX_UPLOAD_BYTES = 128 * 1024 * 1024
const UPLOAD_PATH = /^\/mms\/(image|video|audio|document|sticker)\/([A-Za-z0-9_%-]+)$/

export interface StoredUpload {
  mediaType: string
  encSha256: string
  directPath: string
  url: string
  body: Buffer
  uploadedAt: Date
}

export interface MediaUploadInfo {
  mediaType: string
  encSha256: string
  directPath: string
  url: string
  size: number
  uploadedAt: string
}

export interface DecryptedMedia {
  plaintext: Buffer
  macValid: boolean
}

function b64url (data: Buffer): string {
  return data.toString('base64').replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')
}

export class MediaServer {
  private readonly byPath = new Map<string, StoredUpload>()
  private readonly byEncSha = new Map<string, StoredUpload>()
  readonly auth = randomBytes(24).toString('base64')
  private constructor (
    private readonly server: Server,
    readonly host: string,
    private readonly logger: Logger
  ) {}

  static async start (tls: { cert: string, key: string }, port: number, logger: Logger): Promise<MediaServer> {
    const server = createServer({ cert: tls.cert, key: tls.key })
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(port, '127.0.0.1', () => resolve())
    })
    const { port: actual } = server.address() as AddressInfo
    const instance = new MediaServer(server, `127.0.0.1:${actual}`, logger)
    server.on('request', (req, res) => void instance.handle(req, res))
    return instance
  }

  get url (): string {
    return `https://${this.host}`
  }

  get uploadCount (): number {
    return this.byPath.size
  }

  uploads (): MediaUploadInfo[] {
    return [...this.byPath.values()].map((u) => ({
      mediaType: u.mediaType,
      encSha256: u.encSha256,
      directPath: u.directPath,
      url: u.url,
      size: u.body.length,
      uploadedAt: u.uploadedAt.toISOString()
    }))
  }

  /** Find an upload by the message's directPath/url or its fileEncSha256. */
  find (ref: { directPath?: string | null, url?: string | null, fileEncSha256?: Uint8Array | null }): StoredUpload | undefined {
    for (const candidate of [ref.directPath, ref.url]) {
      if (!candidate) continue
      const pathname = new URL(candidate, this.url).pathname
      const hit = this.byPath.get(pathname)
      if (hit) return hit
    }
    if (ref.fileEncSha256?.length) {
      return this.byEncSha.get(Buffer.from(ref.fileEncSha256).toString('base64'))
    }
    return undefined
  }

  /** Keeps an encrypted blob and serves it at the returned url / direct path (an upload, or a contact's status media). */
  store (mediaType: string, body: Buffer): StoredUpload {
    const encSha = createHash('sha256').update(body).digest()
    const pathname = `/v/t62.7118-24/${randomBytes(16).toString('hex')}.enc`
    const directPath = `${pathname}?ccb=11-4&oh=${randomBytes(8).toString('hex')}&oe=${Math.floor(Date.now() / 1000 + 30 * 86400).toString(16).toUpperCase()}&_nc_sid=5e03e0`
    const upload: StoredUpload = { mediaType, encSha256: encSha.toString('base64'), directPath, url: `${this.url}${directPath}&mms3=true`, body, uploadedAt: new Date() }
    this.byPath.set(pathname, upload)
    this.byEncSha.set(upload.encSha256, upload)
    return upload
  }

  /** WhatsApp media encryption: AES-256-CBC(cipherKey, iv) || HMAC-SHA256(macKey, iv || ciphertext)[0..10]. */
  static async decrypt (body: Buffer, mediaKey: Uint8Array, mediaType: MediaType): Promise<DecryptedMedia> {
    const { iv, cipherKey, macKey } = await getMediaKeys(mediaKey, mediaType)
    if (body.length < 10 + 16) {
      throw new Error('encrypted media too short')
    }
    const ciphertext = body.subarray(0, body.length - 10)
    const mac = body.subarray(body.length - 10)
    const expected = createHmac('sha256', macKey!).update(iv).update(ciphertext).digest().subarray(0, 10)
    const decipher = createDecipheriv('aes-256-cbc', cipherKey, iv)
    const plaintext = Buffer.concat([decipher.update(ciphertext), decipher.final()])
    return { plaintext, macValid: timingSafeEqual(mac, expected) }
  }

  async stop (): Promise<void> {
    this.server.closeAllConnections()
    await new Promise<void>((resolve) => this.server.close(() => resolve()))
  }

  private async handle (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.url)
    try {
      if (req.method === 'POST') {
        const match = UPLOAD_PATH.exec(url.pathname)
        if (!match) return this.reply(res, 404, { error: 'unknown upload path' })
        if (url.searchParams.get('auth') !== this.auth) return this.reply(res, 401, { error: 'bad auth token' })
        const body = await readBody(req, MAX_UPLOAD_BYTES)
        const token = decodeURIComponent(match[2])
        const encSha = createHash('sha256').update(body).digest()
        if (b64url(encSha) !== token || url.searchParams.get('token') !== token) {
          return this.reply(res, 400, { error: 'token does not match the sha256 of the uploaded bytes' })
        }
        const upload = this.store(match[1], body)
        this.logger.debug({ mediaType: upload.mediaType, size: body.length, directPath: upload.directPath }, 'media uploaded')
        return this.reply(res, 200, { url: upload.url, direct_path: upload.directPath })
      }
      if (req.method === 'GET' || req.method === 'HEAD') {
        const upload = this.byPath.get(url.pathname)
        if (!upload) return this.reply(res, 404, { error: 'no such media' })
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': upload.body.length })
        res.end(req.method === 'HEAD' ? undefined : upload.body)
        return
      }
      this.reply(res, 405, { error: 'method not allowed' })
    } catch (error) {
      this.reply(res, 400, { error: (error as Error).message })
    }
  }

  private reply (res: import('node:http').ServerResponse, status: number, body: unknown): void {
    if (res.headersSent) return
    res.writeHead(status, { 'content-type': 'application/json' })
    res.end(JSON.stringify(body))
  }
}

export function readBody (req: import('node:http').IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    req.on('data', (chunk: Buffer) => {
      size += chunk.length
      if (size > limit) {
        reject(new Error(`body larger than ${limit} bytes`))
        req.destroy()
        return
      }
      chunks.push(chunk)
    })
    req.on('end', () => resolve(Buffer.concat(chunks, size)))
    req.on('error', reject)
  })
}
