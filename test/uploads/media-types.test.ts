import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import type { WAMediaUploadFunction } from '@whiskeysockets/baileys'
import pino from 'pino'
import { sniff } from '../../src/media/sniff.js'
import { extensionsOf, MEDIA_TYPES } from '../../src/media/types.js'
import { buildStatusMessage, mimetypeOf } from '../../src/platform/session/status-message.js'
import { mp4 } from './fixtures.js'

// The one extension → MIME table (src/media/types.ts) is what an upload is typed by (sniff) and what a status
// is sent with when its content came without a mimetype (status-message.ts mimetypeOf); both must agree.

test('M4V goes out as video/mp4, from an upload and from a name alike', () => {
  assert.equal(MEDIA_TYPES.m4v.mimeType, 'video/mp4')
  assert.deepEqual(sniff(mp4(16, 'M4V ', ['M4V ', 'mp42'])), { kind: 'video', mimeType: 'video/mp4', ext: 'm4v' })
  assert.equal(mimetypeOf('video', { path: 'clip.M4V' }), 'video/mp4')
  assert.equal(mimetypeOf('video', { url: 'https://example.com/a/clip.m4v?x=1' }), 'video/mp4')
})

test('every image and video type of the table, by every spelling of its extension, is sent with the table\'s mimetype', () => {
  for (const type of Object.values(MEDIA_TYPES)) {
    if (type.kind === 'audio') continue
    for (const ext of extensionsOf(type)) {
      assert.equal(mimetypeOf(type.kind, { path: `/uploads/x.${ext}` }), type.mimeType, ext)
      assert.equal(mimetypeOf(type.kind, { url: `https://example.com/x.${ext.toUpperCase()}` }), type.mimeType, ext)
    }
  }
  // another kind's extension, or none we know: no mimetype (Baileys' default for the kind)
  assert.equal(mimetypeOf('image', { path: 'x.mp4' }), undefined)
  assert.equal(mimetypeOf('video', { path: 'x.mp3' }), undefined)
  assert.equal(mimetypeOf('video', { path: 'x.bin' }), undefined)
  assert.equal(mimetypeOf('image', { path: 'noext' }), undefined)
})

test('the status message built for a video given without a mimetype carries the table\'s', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'media-types-'))
  try {
    const upload: WAMediaUploadFunction = async () => ({ mediaUrl: 'https://mmg.example/x', directPath: '/x' })
    for (const [name, brand, mimetype] of [['clip.m4v', 'M4V ', 'video/mp4'], ['clip.3gpp', '3gp5', 'video/3gpp']]) {
      const path = join(dir, name)
      writeFileSync(path, mp4(256, brand, [brand, 'isom']))
      const message = await buildStatusMessage({ kind: 'video', source: { path }, caption: 'hi' }, upload, pino({ level: 'silent' }))
      assert.equal(message.videoMessage?.mimetype, mimetype, name)
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})
