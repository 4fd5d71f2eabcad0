import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import * as baileys from '@whiskeysockets/baileys'
import { SenderKeyName } from '@whiskeysockets/baileys/lib/Signal/Group/sender-key-name.js'
import { WebSocketClient } from '@whiskeysockets/baileys/lib/Socket/Client/websocket.js'
import { ASSUMPTIONS } from './assumptions.js'
import type { Assumption, Loaded } from './assumption.js'

export type { Loaded }

// The start-up compatibility check (docs/architecture.md, habit 8): every internal of Baileys (and of what it loads:
// ws, libsignal) the service relies on is listed in assumptions.ts and verified here against the copies
// actually installed. When one does not hold, no session starts (platform.ts), the log names it and
// /api/health shows it (plugins/health/index.ts). UPGRADING.md lists them with the tests guarding them.

export interface BrokenAssumption { name: string, expects: string, source: string }

export interface Compatibility {
  /** the installed Baileys' version */
  baileys: string
  /** every assumption holds */
  compatible: boolean
  /** how many assumptions were checked */
  assumptions: number
  broken: BrokenAssumption[]
}

const require = createRequire(import.meta.url)
const baileysIndex = require.resolve('@whiskeysockets/baileys')
const baileysRoot = dirname(dirname(baileysIndex))
const fromBaileys = createRequire(baileysIndex)

function reader (root: string): (file: string) => string {
  const cache = new Map<string, string>()
  return (file) => {
    let text = cache.get(file)
    if (text === undefined) {
      try { text = readFileSync(join(root, file), 'utf8') } catch { text = '' }
      cache.set(file, text)
    }
    return text
  }
}

let loaded: Loaded | undefined

/** The installed Baileys, ws and libsignal, as the running process loaded them. */
export function loadedBaileys (): Loaded {
  if (loaded !== undefined) return loaded
  const wsRoot = dirname(fromBaileys.resolve('ws'))
  const pkg = JSON.parse(reader(baileysRoot)('package.json') || '{}') as { version?: string }
  loaded = {
    baileys: baileys as unknown as Record<string, unknown>,
    WebSocketClient,
    WebSocket: fromBaileys('ws') as unknown,
    SenderKeyName,
    curve: fromBaileys('libsignal/src/curve.js') as Record<string, unknown>,
    source: reader(baileysRoot),
    wsSource: reader(wsRoot),
    version: pkg.version ?? 'unknown'
  }
  return loaded
}

/** Runs every assumption's check (a check that throws counts as broken). */
export function checkCompatibility (target: Loaded = loadedBaileys(), assumptions: readonly Assumption[] = ASSUMPTIONS): Compatibility {
  const broken: BrokenAssumption[] = []
  for (const a of assumptions) {
    let holds = false
    try { holds = a.check(target) } catch { holds = false }
    if (!holds) broken.push({ name: a.name, expects: a.expects, source: a.source })
  }
  return { baileys: target.version, compatible: broken.length === 0, assumptions: assumptions.length, broken }
}

/** The sentence a refused session start answers with, naming every broken assumption. */
export function describeBroken (compat: Compatibility): string {
  const names = compat.broken.map((b) => `"${b.name}" (${b.expects}; ${b.source})`).join(', ')
  return `Sessions cannot start: the installed Baileys ${compat.baileys} breaks ${compat.broken.length === 1 ? 'the assumption' : 'the assumptions'} ${names}; see UPGRADING.md`
}
