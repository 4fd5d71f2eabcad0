import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { sniff, SNIFF_BYTES } from '../../src/media/sniff.js'
import { jpeg, mp4, png } from './fixtures.js'

const hex = (h: string) => Buffer.from(h.replace(/\s+/g, ''), 'hex')
const latin = (s: string) => Buffer.from(s, 'latin1')
const pad = (b: Buffer, n = 64) => Buffer.concat([b, Buffer.alloc(Math.max(0, n - b.length))])

function riff (form: string): Buffer {
  return pad(Buffer.concat([latin('RIFF'), hex('24000000'), latin(form)]))
}

function bmp (dibSize: number): Buffer {
  const b = Buffer.alloc(64)
  b.write('BM', 0, 'latin1')
  b.writeUInt32LE(70, 2)
  b.writeUInt32LE(54, 10)
  b.writeUInt32LE(dibSize, 14)
  return b
}

function ebml (docType: string): Buffer {
  const doc = latin(docType)
  // EBML header: version elements, then DocType (0x4282) with a one-byte size
  const body = Buffer.concat([hex('4286 81 01 42f7 81 01 42f2 81 04 42f3 81 08'), hex('4282'), Buffer.from([0x80 | doc.length]), doc])
  return pad(Buffer.concat([hex('1a45dfa3'), Buffer.from([0x80 | body.length]), body]))
}

test('images are recognised by their signatures', () => {
  const cases: Array<[string, Buffer, string, string]> = [
    ['JPEG', jpeg(), 'image/jpeg', 'jpg'],
    ['PNG', png(), 'image/png', 'png'],
    ['GIF87a', pad(latin('GIF87a')), 'image/gif', 'gif'],
    ['GIF89a', pad(latin('GIF89a')), 'image/gif', 'gif'],
    ['WebP', riff('WEBPVP8 '), 'image/webp', 'webp'],
    ['BMP (BITMAPINFOHEADER)', bmp(40), 'image/bmp', 'bmp'],
    ['BMP (V5 header)', bmp(124), 'image/bmp', 'bmp']
  ]
  for (const [what, bytes, mimeType, ext] of cases) assert.deepEqual(sniff(bytes), { kind: 'image', mimeType, ext }, what)
})

test('videos are recognised by their containers', () => {
  const cases: Array<[string, Buffer, string, string]> = [
    ['MP4 isom', mp4(), 'video/mp4', 'mp4'],
    ['MP4 mp42', mp4(16, 'mp42', ['mp42', 'isom']), 'video/mp4', 'mp4'],
    ['MP4 by a compatible brand', mp4(16, 'XYZW', ['XYZW', 'mp41']), 'video/mp4', 'mp4'],
    ['M4V', mp4(16, 'M4V ', ['M4V ', 'M4A ', 'mp42']), 'video/mp4', 'm4v'],
    ['3GP', mp4(16, '3gp5', ['3gp5', 'isom']), 'video/3gpp', '3gp'],
    ['3G2', mp4(16, '3g2a', ['3g2a']), 'video/3gpp2', '3g2'],
    ['MOV (qt brand)', mp4(16, 'qt  ', ['qt  ']), 'video/quicktime', 'mov'],
    ['MOV (classic moov atom)', pad(Buffer.concat([hex('0000006c'), latin('moov')])), 'video/quicktime', 'mov'],
    ['WebM', ebml('webm'), 'video/webm', 'webm'],
    ['Matroska', ebml('matroska'), 'video/x-matroska', 'mkv'],
    ['AVI', riff('AVI LIST'), 'video/x-msvideo', 'avi'],
    ['FLV', pad(Buffer.concat([latin('FLV'), hex('0105000000 09')])), 'video/x-flv', 'flv'],
    ['WMV / ASF', pad(hex('3026b2758e66cf11a6d900aa0062ce6c')), 'video/x-ms-wmv', 'wmv']
  ]
  for (const [what, bytes, mimeType, ext] of cases) assert.deepEqual(sniff(bytes), { kind: 'video', mimeType, ext }, what)
})

test('everything else is unknown', () => {
  const cases: Array<[string, Buffer]> = [
    ['empty', Buffer.alloc(0)],
    ['text', latin('hello world, this is not media at all\n')],
    ['HTML', latin('<!doctype html><html><body>hi</body></html>')],
    ['SVG', latin('<svg xmlns="http://www.w3.org/2000/svg"></svg>')],
    ['PDF', latin('%PDF-1.7\n%\xe2\xe3\xcf\xd3\n')],
    ['ZIP', pad(hex('504b0304 1400 0000'))],
    ['truncated PNG signature', hex('89504e470d0a')],
    ['JPEG start only', hex('ffd8')],
    ['M4B audiobook', mp4(16, 'M4B ', ['M4B ', 'mp42', 'isom'])],
    ['Ogg Vorbis (only Opus is sent)', pad(Buffer.concat([latin('OggS'), hex('0002'), Buffer.alloc(20), hex('01'), hex('1e'), latin('\x01vorbis')]))],
    ['MPEG audio frame with the free bitrate', hex('fffb0000 00000000')],
    ['MPEG Layer I frame', hex('ffff9000 00000000')],
    ['an ID3 tag before a non-audio frame', pad(Buffer.concat([latin('ID3'), hex('0400 00000000 0a'), Buffer.alloc(10), latin('not a frame')]))],
    ['HEIC still image', mp4(16, 'heic', ['mif1', 'heic'])],
    ['AVIF still image', mp4(16, 'avif', ['avif', 'mif1', 'miaf'])],
    ['ftyp with no known brand', mp4(16, 'abcd', ['efgh'])],
    ['a text file starting with BM', pad(latin('BMW owners club newsletter, issue 12'))],
    ['GIF without version', pad(latin('GIF8'))],
    ['FLV with the wrong version', pad(Buffer.concat([latin('FLV'), hex('02')]))],
    ['part of the ASF GUID', hex('3026b2758e66cf11')]
  ]
  for (const [what, bytes] of cases) assert.equal(sniff(bytes), null, what)
})

test('audio: OGG/Opus, MP3 (frame or ID3 tag), M4A, ADTS AAC and WAV by their first bytes', () => {
  const ogg = readFileSync(new URL('audio/voice.ogg', import.meta.url))
  const mp3 = readFileSync(new URL('audio/tone.mp3', import.meta.url))
  const cases: Array<[string, Buffer, string, string]> = [
    ['OGG/Opus (opusenc)', ogg, 'audio/ogg; codecs=opus', 'ogg'],
    ['MP3 frame (lame)', mp3, 'audio/mpeg', 'mp3'],
    ['MP3 behind a short ID3v2 tag', Buffer.concat([latin('ID3'), hex('0300 00000000 0a'), Buffer.alloc(10), mp3]), 'audio/mpeg', 'mp3'],
    ['MP3 behind an ID3v2 tag longer than the head', pad(Buffer.concat([latin('ID3'), hex('0400 00001000')]), 64), 'audio/mpeg', 'mp3'],
    ['M4A', mp4(16, 'M4A ', ['M4A ', 'mp42', 'isom']), 'audio/mp4', 'm4a'],
    ['ADTS AAC', pad(hex('fff15080 02ffc0')), 'audio/aac', 'aac'],
    ['WAV', riff('WAVEfmt '), 'audio/wav', 'wav']
  ]
  for (const [what, bytes, mimeType, ext] of cases) {
    const type = sniff(bytes.subarray(0, SNIFF_BYTES))
    assert.deepEqual(type && { kind: type.kind, mimeType: type.mimeType, ext: type.ext }, { kind: 'audio', mimeType, ext }, what)
  }
})

test('the sniffing window is enough for every format and a longer head changes nothing', () => {
  for (const bytes of [png(), jpeg(), mp4(1000), ebml('webm')]) {
    const full = Buffer.concat([bytes, Buffer.alloc(4096, 7)])
    assert.deepEqual(sniff(full.subarray(0, SNIFF_BYTES)), sniff(full))
  }
  // a Uint8Array view into a larger buffer is read from its own offset
  const shared = Buffer.concat([Buffer.alloc(10, 0xff), png()])
  assert.equal(sniff(new Uint8Array(shared.buffer, shared.byteOffset + 10, shared.length - 10))?.ext, 'png')
})
