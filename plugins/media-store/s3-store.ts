import { randomBytes } from 'node:crypto'
import { open as openFile, unlink } from 'node:fs/promises'
import { join, resolve as resolvePath } from 'node:path'
import { PassThrough, type Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import {
  AbortMultipartUploadCommand, DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, ListMultipartUploadsCommand,
  ListObjectsV2Command, S3Client, S3ServiceException
} from '@aws-sdk/client-s3'
import { Upload } from '@aws-sdk/lib-storage'
import type { MultipartFile } from '@fastify/multipart'
import type { FastifyBaseLogger } from 'fastify'
import type { S3Config } from '../../src/config.js'
import { PRIVATE_FILE_MODE } from '../../src/db/file-modes.js'
import type { UploadStore } from '../../src/db/stores/uploads.js'
import { BadRequest, NoFileUploaded } from '../../src/errors.js'
import { audioDetails } from '../../src/media/audio.js'
import { sniff, SNIFF_BYTES, type SniffedType } from '../../src/media/sniff.js'
import type { MediaKind } from '../../src/media/types.js'
import {
  declaredAs, drain, isStoredName, LocalCopy, prepareUploadDir, safeName, STORED_NAME, tooLargeFor, wrongType, type MediaStore, type Reconciled,
  type SavedUpload
} from './media-port.js'

// MEDIA_STORE=s3: uploads as objects in an S3-compatible bucket, named as on disk (the stored filename is the
// key), so nodes that share no folder share the media. An upload streams through @aws-sdk/lib-storage: one
// PutObject, or a multipart upload that becomes an object only when it completes (S3 makes it visible
// atomically), so a half-received file is never listed nor readable. A refused or broken upload is aborted
// on the server (AbortMultipartUpload); one a crash cut off is aborted by the next start (reconcile).
// Audio: its duration must be read from the file before the row commits, and music-metadata may need the
// whole file (VBR MP3, an M4A's index at its end), so while it streams to the bucket it is also written to a
// 0600 `.part` copy in the node's own folder (never held in memory), read once the object is complete and
// removed; a crash leaves the copy to the next start's clean-up like any `.part` file.

/** S3's smallest part; an upload holds at most QUEUE_SIZE parts in memory, whatever the file's size */
const PART_SIZE = 5 * 1024 * 1024
const QUEUE_SIZE = 2

export interface S3MediaStoreOptions {
  s3: S3Config
  /** UPLOAD_DIR: the node's own folder for the temporary copies the platform reads while sending */
  scratchDir: string
  uploads: UploadStore
  maxUploadBytes: number
  maxUploadMb: number
  log: FastifyBaseLogger
}

/** The bucket's client: requests are signed for the region; checksums only where S3 requires them. */
export function createS3Client (s3: S3Config): S3Client {
  // the SDK's own notice that releases after January 2027 need Node 22 goes to stderr (process.emitWarning);
  // the version is pinned in package.json, and nothing but pino writes to the console (docs/operations.md)
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true'
  return new S3Client({
    region: s3.region,
    ...(s3.endpoint === null ? {} : { endpoint: s3.endpoint }),
    forcePathStyle: s3.forcePathStyle,
    ...(s3.credentials === null ? {} : { credentials: s3.credentials }),
    // S3-compatible stores (MinIO, Ceph, Garage, …) do not all take the SDK's default CRC32 trailers on
    // every request; MD5 or checksums are still sent where the S3 API requires one
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    requestHandler: { connectionTimeout: 10_000, requestTimeout: 120_000 }
  })
}

/** Whether an S3 error says the key is not there. */
function notFound (err: unknown): boolean {
  return err instanceof S3ServiceException && (err.name === 'NotFound' || err.name === 'NoSuchKey' || err.$metadata.httpStatusCode === 404)
}

export function createS3MediaStore (opts: S3MediaStoreOptions) {
  const { s3, uploads, maxUploadBytes, log } = opts
  const Bucket = s3.bucket
  const scratchDir = resolvePath(opts.scratchDir)
  const client = createS3Client(s3)
  const tooLarge = tooLargeFor(opts.maxUploadMb)

  async function save (file: MultipartFile, kind: MediaKind): Promise<SavedUpload> {
    if (!declaredAs(file.mimetype, kind)) {
      await drain(file)
      throw wrongType(kind)
    }
    const source = file.file
    const chunks = source[Symbol.asyncIterator]() as AsyncIterator<Buffer>
    let bytes = 0
    /** the next chunk, null at the end; a client that breaks off is a bad request */
    const next = async (): Promise<Buffer | null> => {
      try {
        const r = await chunks.next()
        if (r.done === true) return null
        bytes += r.value.length
        return r.value
      } catch {
        throw new BadRequest('Upload interrupted')
      }
    }
    const rest = async (): Promise<void> => { while (await next() !== null) { /* read to the end, keep nothing */ } }
    // the head first: the stored name carries the sniffed type's extension, so it is known before the upload starts
    const head: Buffer[] = []
    while (bytes < SNIFF_BYTES) {
      const c = await next()
      if (c === null) break
      head.push(c)
    }
    const type = sniff(Buffer.concat(head).subarray(0, SNIFF_BYTES))
    if (bytes === 0) throw new NoFileUploaded()
    if (type === null || type.kind !== kind || bytes > maxUploadBytes) {
      await rest()
      throw source.truncated || bytes > maxUploadBytes ? tooLarge(kind) : wrongType(kind)
    }
    // audio: a local copy for reading its duration (see the top of this file)
    let copy: LocalCopy | null = null
    try {
      if (type.kind === 'audio') copy = await LocalCopy.create(scratchDir)
      return await stream(file, kind, type, head, next, copy, () => bytes)
    } catch (err) {
      await rest().catch(() => {})
      throw err
    } finally {
      await copy?.remove()
    }
  }

  /** Streams the file (its sniffed head, then the rest) to the bucket and commits its row; refusals abort the upload. */
  async function stream (
    file: MultipartFile, kind: MediaKind, type: SniffedType, head: Buffer[], next: () => Promise<Buffer | null>,
    copy: LocalCopy | null, received: () => number
  ): Promise<SavedUpload> {
    const filename = `${Date.now()}-${randomBytes(6).toString('hex')}-${safeName(file.filename, type)}`
    const body = new PassThrough()
    const upload = new Upload({
      client,
      params: { Bucket, Key: filename, Body: body, ContentType: type.mimeType },
      partSize: PART_SIZE,
      queueSize: QUEUE_SIZE,
      // a failed upload's parts are deleted on the server (AbortMultipartUpload)
      leavePartsOnError: false
    })
    const done = upload.done()
    done.catch(() => {}) // awaited below, on every path
    let refused: Error | null = null
    try {
      for (let c: Buffer | null = Buffer.concat(head); c !== null; c = await next()) {
        if (received() > maxUploadBytes) { refused = tooLarge(kind); break }
        await copy?.write(c)
        // backpressure: wait for lib-storage to take the chunk, or for the upload to fail
        if (!body.write(c)) await Promise.race([new Promise((resolve) => body.once('drain', resolve)), done])
      }
      if (refused === null && file.file.truncated) refused = tooLarge(kind)
    } catch (err) {
      refused = err instanceof Error ? err : new Error(String(err))
    }
    if (refused !== null) {
      // the body breaks off: lib-storage stops and aborts the multipart upload on the server before done settles
      body.destroy(refused)
      await done.catch((err: unknown) => {
        if (err !== refused) log.warn({ err, key: filename }, 'S3: the refused upload could not be aborted on the server; the next start or a lifecycle rule removes its parts')
      })
      throw refused
    }
    body.end()
    // the object exists from here (a multipart upload completes atomically)
    await done
    const size = received()
    let seconds: number | undefined
    try {
      if (copy !== null) {
        // audio: the duration from the complete copy; a file without one is not audio we can send
        const audio = await audioDetails(await copy.complete(), type)
        if (audio === null) throw wrongType(kind)
        seconds = audio.seconds
      }
      await uploads.insert({ filename, kind, mimeType: type.mimeType, size, createdAt: Date.now() })
    } catch (err) {
      await client.send(new DeleteObjectCommand({ Bucket, Key: filename })).catch(() => {})
      throw err
    }
    return { filename, size, mimeType: type.mimeType, ...(seconds !== undefined ? { seconds } : {}) }
  }

  async function exists (filename: string): Promise<boolean> {
    if (!isStoredName(filename)) return false
    try {
      await client.send(new HeadObjectCommand({ Bucket, Key: filename }))
      return true
    } catch (err) {
      if (notFound(err)) return false
      throw err
    }
  }

  async function open (filename: string) {
    if (!isStoredName(filename)) return null
    let object: Readable
    try {
      object = (await client.send(new GetObjectCommand({ Bucket, Key: filename }))).Body as Readable
    } catch (err) {
      if (notFound(err)) return null
      throw err
    }
    // a 0600 copy in the node's own folder; a crash leaves a `.part` file, removed at the next start
    const path = join(scratchDir, `.s3-${randomBytes(8).toString('hex')}.part`)
    const release = async (): Promise<void> => { await unlink(path).catch(() => {}) }
    try {
      const handle = await openFile(path, 'wx', PRIVATE_FILE_MODE)
      await pipeline(object, handle.createWriteStream())
    } catch (err) {
      object.destroy()
      await release()
      throw err
    }
    return { path, release }
  }

  async function remove (filename: string): Promise<boolean> {
    const present = await exists(filename)
    if (present) await client.send(new DeleteObjectCommand({ Bucket, Key: filename }))
    await uploads.remove(filename)
    return present
  }

  async function reconcile (graceMs: number): Promise<Reconciled> {
    const now = Date.now()
    const old = (at: Date | undefined): boolean => graceMs <= 0 || (at !== undefined && now - at.getTime() > graceMs)
    let parts = await prepareUploadDir(scratchDir, graceMs, now)
    parts += await abortAbandonedUploads(old)
    // rows before the listing: an upload commits its row after its object completes, so a row read here
    // has its object in the listing below unless the object is really gone
    const rows = new Set(await uploads.names())
    const objects = new Map<string, Date | undefined>()
    let token: string | undefined
    for (let page = 0; page < 100_000; page++) {
      const listed = await client.send(new ListObjectsV2Command({ Bucket, ContinuationToken: token }))
      for (const o of listed.Contents ?? []) if (o.Key !== undefined && STORED_NAME.test(o.Key)) objects.set(o.Key, o.LastModified)
      token = listed.NextContinuationToken
      if (listed.IsTruncated !== true || token === undefined) break
    }
    const filesWithoutRow: string[] = []
    for (const [key, at] of objects) {
      if (rows.has(key) || !old(at)) continue
      await client.send(new DeleteObjectCommand({ Bucket, Key: key }))
      filesWithoutRow.push(key)
    }
    const rowsWithoutFile = [...rows].filter((f) => !objects.has(f))
    for (const name of rowsWithoutFile) await uploads.remove(name)
    return { parts, filesWithoutRow, rowsWithoutFile }
  }

  /** Multipart uploads a crash left (never completed, so never listed as objects), aborted; how many. */
  async function abortAbandonedUploads (old: (at: Date | undefined) => boolean): Promise<number> {
    let aborted = 0
    let keyMarker: string | undefined
    let uploadIdMarker: string | undefined
    try {
      for (let page = 0; page < 10_000; page++) {
        const listed = await client.send(new ListMultipartUploadsCommand({ Bucket, KeyMarker: keyMarker, UploadIdMarker: uploadIdMarker }))
        for (const u of listed.Uploads ?? []) {
          if (u.Key === undefined || u.UploadId === undefined || !STORED_NAME.test(u.Key) || !old(u.Initiated)) continue
          await client.send(new AbortMultipartUploadCommand({ Bucket, Key: u.Key, UploadId: u.UploadId }))
          aborted++
        }
        keyMarker = listed.NextKeyMarker
        uploadIdMarker = listed.NextUploadIdMarker
        if (listed.IsTruncated !== true) break
      }
    } catch (err) {
      // a store without ListMultipartUploads keeps such parts until a lifecycle rule removes them (docs/operations.md)
      log.warn({ err, bucket: Bucket }, 'S3: could not list or abort unfinished multipart uploads; set a lifecycle rule (AbortIncompleteMultipartUpload) on the bucket')
    }
    return aborted
  }

  return {
    kind: 's3' as const,
    location: `s3://${Bucket}`,
    save,
    exists,
    open,
    remove,
    reconcile,
    close: async () => { client.destroy() }
  } satisfies MediaStore
}
