import assert from 'node:assert/strict'
import { readdirSync } from 'node:fs'
import type { FastifyInstance } from 'fastify'
import { PNG } from 'pngjs'
import type { LocalMediaStore } from '../../plugins/uploads/media-store.js'

/** A real 2×2 PNG, encoded by pngjs. */
export function png (): Buffer {
  const image = new PNG({ width: 2, height: 2 })
  image.data.fill(0x80)
  return PNG.sync.write(image)
}

/** A real 4×4 baseline JPEG (made once with sharp). */
export function jpeg (): Buffer {
  return Buffer.from(
    '/9j/2wBDABALDA4MChAODQ4SERATGCgaGBYWGDEjJR0oOjM9PDkzODdASFxOQERXRTc4UG1RV19iZ2hnPk1xeXBkeFxlZ2P/2wBDARESEhgVGC8aGi9jQjhCY2Nj' +
    'Y2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2P/wAARCAAEAAQDASIAAhEBAxEB/8QAFQABAQAAAAAAAAAAAAAAAAAAAAX/' +
    'xAAUEAEAAAAAAAAAAAAAAAAAAAAA/8QAFQEBAQAAAAAAAAAAAAAAAAAABAb/xAAUEQEAAAAAAAAAAAAAAAAAAAAA/9oADAMBAAIRAxEAPwCWAEpn/9k=',
    'base64'
  )
}

function box (type: string, body: Buffer): Buffer {
  const head = Buffer.alloc(8)
  head.writeUInt32BE(8 + body.length, 0)
  head.write(type, 4, 'latin1')
  return Buffer.concat([head, body])
}

/** The start of an ISO-BMFF file: `ftyp` with the given brands, then an `mdat` box of `payload` bytes. */
export function mp4 (payload = 64, major = 'isom', compatible = ['isom', 'iso2', 'avc1', 'mp41']): Buffer {
  const ftyp = box('ftyp', Buffer.concat([Buffer.from(major, 'latin1'), Buffer.from([0, 0, 2, 0]), ...compatible.map((b) => Buffer.from(b, 'latin1'))]))
  return Buffer.concat([ftyp, box('mdat', Buffer.alloc(payload, 0x11))])
}

export interface FilePart { field: string, filename: string, type: string, data: Buffer }
export interface FieldPart { field: string, value: string }

/** A multipart/form-data body built byte by byte, so the filename and part headers are exactly as given. */
export function form (...parts: Array<FilePart | FieldPart>): { payload: Buffer, headers: Record<string, string> } {
  const boundary = '----st-test-' + Math.random().toString(16).slice(2)
  const chunks: Buffer[] = []
  for (const p of parts) {
    if ('data' in p) {
      chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${p.field}"; filename="${p.filename}"\r\nContent-Type: ${p.type}\r\n\r\n`, 'latin1'), p.data, Buffer.from('\r\n'))
    } else {
      chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${p.field}"\r\n\r\n${p.value}\r\n`, 'latin1'))
    }
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`))
  return { payload: Buffer.concat(chunks), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } }
}

export function filesIn (dir: string): string[] {
  return readdirSync(dir)
}

export async function uploadRows (app: FastifyInstance): Promise<Array<{ filename: string, kind: string, mime_type: string, size: number }>> {
  return await app.db.db.selectFrom('uploads').select(['filename', 'kind', 'mime_type', 'size']).execute()
}

/** The upload folder holds no file (not even a `.part`) and the table no row. */
export async function assertNothingStored (app: FastifyInstance, what = ''): Promise<void> {
  assert.deepEqual(filesIn(app.config.uploadDir), [], `files left on disk ${what}`)
  assert.deepEqual(await uploadRows(app), [], `rows left in uploads ${what}`)
}

/** The app's media store as the local store it is by default (MEDIA_STORE=local): its folder and file paths. */
export function local (app: FastifyInstance): LocalMediaStore {
  assert.equal(app.mediaStore.kind, 'local')
  return app.mediaStore as LocalMediaStore
}
