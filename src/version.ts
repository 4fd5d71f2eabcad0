import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { PACKAGE_ROOT } from './paths.js'

const pkg = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string }

/** The service version, from package.json. */
export const APP_VERSION: string = pkg.version
