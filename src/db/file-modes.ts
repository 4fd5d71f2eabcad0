import { chmodSync, closeSync, mkdirSync, openSync, readdirSync, statSync } from 'node:fs'
import { dirname, join } from 'node:path'

// The database holds every linked account's private keys (auth_creds, auth_keys) and the upload folder
// holds what users sent: neither is anyone else's business on the machine. Folders are 0700, files 0600;
// what an older version (or a loose umask) left wider is tightened, and reported so it can be logged.

export const PRIVATE_DIR_MODE = 0o700
export const PRIVATE_FILE_MODE = 0o600

export interface Tightened {
  path: string
  /** octal, e.g. '644' */
  from: string
  to: string
}

const octal = (mode: number) => (mode & 0o777).toString(8)

/** Removes the permission bits outside `wanted` (never adds any); null when there was nothing to remove. */
export function tighten (path: string, wanted: number): Tightened | null {
  let mode: number
  try {
    mode = statSync(path).mode & 0o777
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null
    throw err
  }
  if ((mode & ~wanted) === 0) return null
  chmodSync(path, mode & wanted)
  return { path, from: octal(mode), to: octal(mode & wanted) }
}

/** Creates the folder (and its missing parents) 0700, or tightens it when it exists. */
export function ensurePrivateDir (dir: string): Tightened | null {
  mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE })
  return tighten(dir, PRIVATE_DIR_MODE)
}

/**
 * Before SQLite opens `file`: its folder 0700, the file itself created 0600 when missing (SQLite gives the
 * -wal and -shm files it creates the database file's mode), and all three tightened when they exist.
 */
export function secureDatabaseFiles (file: string): Tightened[] {
  const out = [ensurePrivateDir(dirname(file))]
  closeSync(openSync(file, 'a', PRIVATE_FILE_MODE))
  for (const path of [file, `${file}-wal`, `${file}-shm`]) out.push(tighten(path, PRIVATE_FILE_MODE))
  return out.filter((t) => t !== null)
}

/** The upload folder 0700 and every file directly in it 0600. */
export function secureUploadDir (dir: string): Tightened[] {
  const out = [ensurePrivateDir(dir)]
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isFile()) out.push(tighten(join(dir, entry.name), PRIVATE_FILE_MODE))
  }
  return out.filter((t) => t !== null)
}
