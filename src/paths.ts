import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

/**
 * The package's folder (the one holding package.json and public/), found by walking up from this
 * module: the same answer from src/ under tsx and from the compiled dist/src/.
 */
function findPackageRoot (from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir
    if (dirname(dir) === dir) throw new Error(`no package.json above ${from}`)
  }
}

export const PACKAGE_ROOT: string = findPackageRoot(dirname(fileURLToPath(import.meta.url)))
