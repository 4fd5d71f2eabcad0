import { randomBytes } from 'node:crypto'
import { rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import type { IncomingMessage } from 'node:http'
import { DeleteObjectCommand, GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3'
import { tempFolder } from './server-process.js'

// A private S3 API server for tests: s3rver (the npm package @20minutes/s3rver, a maintained fork of s3rver
// that runs on Node 20; engines ">=20") on a free loopback port, its objects in a temporary folder, one
// bucket. It runs in the test's process (a plain Koa server); stop() closes it and removes the folder.
// `requests` records every request it answered (method, path, query), so a test can see which S3 calls
// the service made: s3rver answers AbortMultipartUpload with 405 and ListMultipartUploads with 501 (it
// implements neither), so "the service aborted its multipart upload" is read from the calls it made.

const require = createRequire(import.meta.url)
// the test's own S3 client: the SDK's notice about Node 22 would go to stderr
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true'

/** The parts of s3rver (CommonJS, no types) the tests use. */
interface S3rverServer {
  middleware: Array<(ctx: { req: IncomingMessage, method: string, path: string, querystring: string }, next: () => Promise<void>) => Promise<void>>
  run: () => Promise<{ port: number }>
  close: () => Promise<void>
  httpServer?: { closeAllConnections: () => void }
}
type S3rverClass = new (options: Record<string, unknown>) => S3rverServer

export const S3_ACCESS_KEY_ID = 'S3RVER'
/** not s3rver's own (S3RVER): a value no log line can hold by chance, so a test can look for it */
export const S3_SECRET = `st-s3-secret-${randomBytes(12).toString('hex')}`

export interface S3Call { method: string, path: string, query: string }

export interface PrivateS3 {
  endpoint: string
  bucket: string
  /** the service's settings for this server (MEDIA_STORE=s3 and the S3_* settings) */
  env: Record<string, string>
  /** a client of the test's own, to look into the bucket */
  client: S3Client
  /** the keys listed in the bucket now */
  keys: () => Promise<string[]>
  /** an object's bytes */
  read: (key: string) => Promise<Buffer>
  requests: S3Call[]
  stop: () => Promise<void>
}

export async function startS3 (bucket = 'status-media'): Promise<PrivateS3> {
  const S3rver = require('@20minutes/s3rver') as S3rverClass
  const dir = tempFolder('st-s3-')
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory: dir,
    configureBuckets: [{ name: bucket }],
    // s3rver computes bucket-level GETs' (ListObjectsV2) V4 canonical query differently from the AWS SDK and
    // refuses them, so it checks no signature (its only account's secret is S3RVER; the service signs with
    // S3_SECRET as with any S3 server)
    allowMismatchedSignatures: true
  })
  const requests: S3Call[] = []
  server.middleware.unshift(async (ctx, next) => {
    requests.push({ method: ctx.method, path: ctx.path, query: ctx.querystring })
    await next()
  })
  const { port } = await server.run()
  const endpoint = `http://127.0.0.1:${port}`
  const client = new S3Client({
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: S3_ACCESS_KEY_ID, secretAccessKey: S3_SECRET },
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED'
  })
  return {
    endpoint,
    bucket,
    env: {
      MEDIA_STORE: 's3',
      S3_ENDPOINT: endpoint,
      S3_BUCKET: bucket,
      S3_REGION: 'us-east-1',
      S3_ACCESS_KEY_ID,
      S3_SECRET_ACCESS_KEY: S3_SECRET,
      S3_FORCE_PATH_STYLE: 'true'
    },
    client,
    keys: async () => {
      const listed = await client.send(new ListObjectsV2Command({ Bucket: bucket }))
      return (listed.Contents ?? []).map((o) => o.Key ?? '').sort()
    },
    read: async (key) => {
      const got = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }))
      return Buffer.from(await got.Body?.transformToByteArray() ?? [])
    },
    requests,
    stop: async () => {
      client.destroy()
      server.httpServer?.closeAllConnections()
      await server.close().catch(() => {})
      rmSync(dir, { recursive: true, force: true })
    }
  }
}

/** Removes every object (between the steps of a test). */
export async function emptyBucket (s3: PrivateS3): Promise<void> {
  for (const key of await s3.keys()) await s3.client.send(new DeleteObjectCommand({ Bucket: s3.bucket, Key: key }))
}
