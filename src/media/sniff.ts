import { MEDIA_TYPES, type MediaType } from './types.js'

/** What the first bytes of a file say it is. */
export type SniffedType = MediaType

/** Bytes `sniff` needs to decide every format it knows (ISO-BMFF compatible brands come last). */
export const SNIFF_BYTES = 256

const ASF_GUID = Buffer.from('3026b2758e66cf11a6d900aa0062ce6c', 'hex')

const { jpg: JPEG, png: PNG, gif: GIF, webp: WEBP, bmp: BMP, mp4: MP4, m4v: M4V, mov: MOV, '3gp': GPP, '3g2': GPP2, webm: WEBM, mkv: MKV, avi: AVI, flv: FLV, wmv: WMV, ogg: OGG, mp3: MP3, m4a: M4A, aac: AAC, wav: WAV } = MEDIA_TYPES

// ISO-BMFF brands (major or compatible) that mean a video we can send; M4A/HEIF/AVIF brands are left out on purpose.
const VIDEO_BRANDS = new Map<string, SniffedType>([
  ['qt  ', MOV],
  ['M4V ', M4V], ['M4VH', M4V], ['M4VP', M4V],
  ['3gp4', GPP], ['3gp5', GPP], ['3gp6', GPP], ['3gp7', GPP], ['3ge6', GPP], ['3ge7', GPP], ['3gg6', GPP], ['3gs7', GPP],
  ['3g2a', GPP2], ['3g2b', GPP2], ['3g2c', GPP2],
  ['isom', MP4], ['iso2', MP4], ['iso3', MP4], ['iso4', MP4], ['iso5', MP4], ['iso6', MP4], ['iso7', MP4], ['iso8', MP4], ['iso9', MP4],
  ['mp41', MP4], ['mp42', MP4], ['mp71', MP4], ['avc1', MP4], ['dash', MP4], ['MSNV', MP4], ['NDAS', MP4], ['f4v ', MP4],
  ['mmp4', MP4], ['XAVC', MP4], ['FACE', MP4]
])
// A major brand naming audio or a still image wins over any video-ish compatible brand listed after it.
// `M4A ` is the audio we send (Apple's AAC-in-MP4 brand); the others are refused.
const AUDIO_BRANDS = new Map<string, SniffedType>([['M4A ', M4A]])
const NON_VIDEO_BRANDS = new Set(['M4B ', 'M4P ', 'F4A ', 'F4B ', 'heic', 'heix', 'heim', 'heis', 'hevc', 'hevx', 'mif1', 'msf1', 'avif', 'avis', 'crx '])
// Classic QuickTime files may start straight with one of these atoms instead of `ftyp`.
const QUICKTIME_ATOMS = new Set(['moov', 'mdat', 'wide'])
const BMP_HEADER_SIZES = new Set([12, 16, 40, 52, 56, 64, 108, 124])

/** Detects the real type of a file from its first bytes (`SNIFF_BYTES` are enough); null when unknown. */
export function sniff (head: Uint8Array): SniffedType | null {
  const b = Buffer.from(head.buffer, head.byteOffset, head.byteLength)
  const ascii = (start: number, end: number) => b.toString('latin1', start, end)

  if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return JPEG
  if (b.length >= 8 && b.readUInt32BE(0) === 0x89504e47 && b.readUInt32BE(4) === 0x0d0a1a0a) return PNG
  if (b.length >= 6 && (ascii(0, 6) === 'GIF87a' || ascii(0, 6) === 'GIF89a')) return GIF
  if (b.length >= 12 && ascii(0, 4) === 'RIFF') {
    const form = ascii(8, 12)
    if (form === 'WEBP') return WEBP
    if (form === 'AVI ') return AVI
    if (form === 'WAVE') return WAV
    return null
  }
  // "BM" alone is too weak: also require the zero reserved words and a known DIB header size
  if (b.length >= 18 && ascii(0, 2) === 'BM' && b.readUInt32LE(6) === 0 && BMP_HEADER_SIZES.has(b.readUInt32LE(14))) return BMP

  if (b.length >= 12 && ascii(4, 8) === 'ftyp') return isoBrand(b)
  if (b.length >= 8 && QUICKTIME_ATOMS.has(ascii(4, 8))) return MOV
  if (b.length >= 4 && b.readUInt32BE(0) === 0x1a45dfa3) return ebmlDocType(b)
  if (b.length >= 4 && ascii(0, 3) === 'FLV' && b[3] === 0x01) return FLV
  if (b.length >= 16 && b.subarray(0, 16).equals(ASF_GUID)) return WMV
  if (b.length >= 36 && ascii(0, 4) === 'OggS') return oggOpus(b)
  if (b.length >= 10 && ascii(0, 3) === 'ID3') return afterId3(b)
  return audioFrame(b, 0)
}

/** An Ogg stream whose first packet is an Opus header (RFC 7845 §5.1: `OpusHead`); Vorbis or others: null. */
function oggOpus (b: Buffer): SniffedType | null {
  // the first page's header is 27 bytes plus its segment table (byte 26 gives its length, RFC 3533 §6)
  const packet = 27 + b[26]
  return b.length >= packet + 8 && b.toString('latin1', packet, packet + 8) === 'OpusHead' ? OGG : null
}

/** MP3 (or ADTS AAC) behind an ID3v2 tag: the first frame when the tag ends within the head, else MP3. */
function afterId3 (b: Buffer): SniffedType | null {
  // ID3v2 size: four 7-bit bytes (synchsafe), not counting the 10-byte header (id3.org, id3v2.4.0-structure §3.1)
  if ((b[6] | b[7] | b[8] | b[9]) & 0x80) return null
  const end = 10 + ((b[6] << 21) | (b[7] << 14) | (b[8] << 7) | b[9]) + ((b[5] & 0x10) !== 0 ? 10 : 0)
  return end + 4 <= b.length ? audioFrame(b, end) : MP3
}

/** An MPEG-1/2 Layer III frame header (MP3) or an ADTS header (AAC) at `at`; null for anything else. */
function audioFrame (b: Buffer, at: number): SniffedType | null {
  if (b.length < at + 4 || b[at] !== 0xff) return null
  const second = b[at + 1]
  const third = b[at + 2]
  // ADTS: 12-bit sync, layer 00; sampling frequency index 0-12 (ISO/IEC 14496-3 1.A.2.2.1)
  if ((second & 0xf6) === 0xf0) return ((third >> 2) & 0x0f) <= 12 ? AAC : null
  // MPEG audio: 11-bit sync, version not reserved (01), layer III (01), bitrate index not 0000/1111, sample rate index not 11
  if ((second & 0xe0) !== 0xe0 || ((second >> 3) & 0x03) === 0x01 || ((second >> 1) & 0x03) !== 0x01) return null
  const bitrate = third >> 4
  return bitrate !== 0 && bitrate !== 0x0f && ((third >> 2) & 0x03) !== 0x03 ? MP3 : null
}

function isoBrand (b: Buffer): SniffedType | null {
  const major = b.toString('latin1', 8, 12)
  const known = VIDEO_BRANDS.get(major) ?? AUDIO_BRANDS.get(major)
  if (known !== undefined) return known
  if (NON_VIDEO_BRANDS.has(major)) return null
  // compatible brands follow the minor version, up to the end of the ftyp box
  const boxEnd = Math.min(b.readUInt32BE(0), b.length)
  for (let at = 16; at + 4 <= boxEnd; at += 4) {
    const brand = VIDEO_BRANDS.get(b.toString('latin1', at, at + 4))
    if (brand !== undefined) return brand
  }
  return null
}

function ebmlDocType (b: Buffer): SniffedType {
  // DocType element (ID 0x4282) sits in the EBML header, a few dozen bytes in
  const header = b.subarray(0, Math.min(b.length, 64))
  const at = header.indexOf(Buffer.from([0x42, 0x82]))
  if (at !== -1 && header.subarray(at, at + 16).includes('webm', 0, 'latin1')) return WEBM
  return MKV
}
