import { open } from 'node:fs/promises'
import { sniff, SNIFF_BYTES } from './sniff.js'
import type { MediaType } from './types.js'

// What an audio status needs beyond its bytes: how long it plays, and whether it goes out as a voice note.
// The duration is read from the container by music-metadata (11.x: the last major that runs on Node 20; 12
// needs Node 22), which Baileys rc14 itself uses for the same field (Utils/messages-media.js getAudioDuration).

/** How an audio file is sent: OGG/Opus as a voice note, anything else as plain audio. */
export interface AudioDetails {
  mimetype: string
  /** a voice note (push-to-talk): the platform's own voice notes are Opus in OGG (whatsapp-rust src/media.rs audio_message) */
  ptt: boolean
  /** whole seconds (the field is an integer), rounded, at least 1 */
  seconds: number
}

/** Duration in seconds read from the file's headers (the whole file for VBR MP3 without a Xing header); null when unreadable. */
export async function audioDuration (path: string): Promise<number | null> {
  // loaded on the first audio file, not at start: ~0.15 CPU s of every start that most never use (outside the
  // try: a library that cannot load is an error of the service, not an unreadable file)
  const { parseFile } = await import('music-metadata')
  try {
    const { format } = await parseFile(path, { duration: true, skipCovers: true })
    const seconds = format.duration
    return seconds !== undefined && Number.isFinite(seconds) && seconds > 0 ? seconds : null
  } catch {
    return null
  }
}

/** The details of a sniffed audio file; null when its duration cannot be read (not playable audio). */
export async function audioDetails (path: string, type: MediaType): Promise<AudioDetails | null> {
  const duration = await audioDuration(path)
  if (duration === null) return null
  return { mimetype: type.mimeType, ptt: type.ext === 'ogg', seconds: Math.max(1, Math.round(duration)) }
}

/** The details of a stored file that must be audio (sniffed again from its first bytes); null when it is not. */
export async function audioFileDetails (path: string): Promise<AudioDetails | null> {
  const file = await open(path, 'r')
  let head: Buffer
  try {
    const { buffer, bytesRead } = await file.read(Buffer.alloc(SNIFF_BYTES), 0, SNIFF_BYTES, 0)
    head = buffer.subarray(0, bytesRead)
  } finally {
    await file.close()
  }
  const type = sniff(head)
  return type?.kind === 'audio' ? await audioDetails(path, type) : null
}
