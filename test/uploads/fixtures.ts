import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import type { FastifyInstance } from 'fastify'
import { PNG } from 'pngjs'
import type { LocalMediaStore } from '../../plugins/media-store/index.js'
import { dbOf } from '../support/db.js'

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
  return await dbOf(app).db.selectFrom('uploads').select(['filename', 'kind', 'mime_type', 'size']).execute()
}

/** The upload folder holds no file (not even a `.part`) and the table no row. */
export async function assertNothingStored (app: FastifyInstance, what = ''): Promise<void> {
  assert.deepEqual(filesIn(app.config.uploadDir), [], `files left on disk ${what}`)
  assert.deepEqual(await uploadRows(app), [], `rows left in uploads ${what}`)
}

/** 3 s of a 330 Hz tone as OGG/Opus (made once with opus-tools' opusenc 0.2, libopus 1.3.1: `--bitrate 6`). */
export function voiceOgg (): Buffer {
  return readFileSync(new URL('audio/voice.ogg', import.meta.url))
}

/** 2.09 s of a 440 Hz tone as MP3 (made once with LAME 3.100: `-b 16 -m m`; 2.088 s with the encoder's padding). */
export function toneMp3 (): Buffer {
  return readFileSync(new URL('audio/tone.mp3', import.meta.url))
}

/** A real PCM WAV (8 kHz, mono, 8-bit) of `seconds` of silence, written field by field (RIFF/WAVE, `fmt `, `data`). */
export function wav (seconds: number): Buffer {
  const rate = 8000
  const samples = Math.round(rate * seconds)
  const head = Buffer.alloc(44)
  head.write('RIFF', 0, 'latin1')
  head.writeUInt32LE(36 + samples, 4)
  head.write('WAVEfmt ', 8, 'latin1')
  head.writeUInt32LE(16, 16) // fmt chunk size
  head.writeUInt16LE(1, 20) // PCM
  head.writeUInt16LE(1, 22) // mono
  head.writeUInt32LE(rate, 24)
  head.writeUInt32LE(rate, 28) // bytes per second
  head.writeUInt16LE(1, 32) // block align
  head.writeUInt16LE(8, 34) // bits per sample
  head.write('data', 36, 'latin1')
  head.writeUInt32LE(samples, 40)
  return Buffer.concat([head, Buffer.alloc(samples, 0x80)])
}

/** The app's media store as the local store it is by default (MEDIA_STORE=local): its folder and file paths. */
export function local (app: FastifyInstance): LocalMediaStore {
  assert.equal(app.mediaStore.kind, 'local')
  return app.mediaStore as LocalMediaStore
}
