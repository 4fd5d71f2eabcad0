/**
 * The control for bench/send-many.ts: bare Baileys 7.0.0-rc14 on STOCK libsignal 6 (bare-baileys-main.mjs)
 * in its own process, linked to the same emulator as the service. The project's libsignal patch
 * (patches/) is reversed on a copy of node_modules/libsignal, which stock-libsignal.mjs maps Baileys'
 * imports to; the control reports which curve.js Baileys loaded and it must be byte for byte the stock one.
 */
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { ROOT, spawnNode, type Proc } from '../../test/support/processes.js'
import { sleep } from '../../test/support/wait.js'

/** sha256 of libsignal 6.0.0's src/curve.js as published on npm */
const STOCK_CURVE_SHA256 = 'a45c682103f1ab047a24497db2175dec5605495d8c0f4c11354b347d31950f6a'

/**
 * node_modules/libsignal copied with the patch reversed. Inside node_modules (its .cache), so the copy's
 * own `require('curve25519-js')` and `require('protobufjs')` find the installed packages.
 */
export function stockLibsignal (): { dir: string, rm: () => void } {
  const dir = join(ROOT, 'node_modules', '.cache', `bench-stock-libsignal-${process.pid}`)
  rmSync(dir, { recursive: true, force: true })
  mkdirSync(dir, { recursive: true })
  const rm = (): void => { rmSync(dir, { recursive: true, force: true }) }
  process.once('exit', rm)
  cpSync(join(ROOT, 'node_modules', 'libsignal'), dir, { recursive: true })
  const patches = readdirSync(join(ROOT, 'patches')).filter((f) => f.startsWith('libsignal+') && f.endsWith('.patch'))
  for (const patch of patches) {
    // patch-package writes a/node_modules/libsignal/<path>: strip three components
    const reversed = spawnSync('patch', ['-R', '-p3', '-d', dir, '-i', join(ROOT, 'patches', patch)], { encoding: 'utf8', timeout: 30_000 })
    if (reversed.status !== 0) throw new Error(`could not reverse ${patch}: ${reversed.stdout}${reversed.stderr}`)
  }
  if (sha256(join(dir, 'src', 'curve.js')) !== STOCK_CURVE_SHA256) throw new Error('the reversed libsignal copy is not the stock libsignal 6.0.0')
  return { dir, rm }
}

const sha256 = (file: string): string => createHash('sha256').update(readFileSync(file)).digest('hex')

export interface BareBaileys extends Proc {
  /** sends a text status to `jids` with Baileys' sendMessage; resolves with its message id */
  send: (text: string, jids: string[]) => Promise<string>
}

export async function startBareBaileys (opts: {
  dir: string
  emulator: { wsUrl: string, rootPublicKey: string, controlUrl: string, caFile: string }
  number: string
}): Promise<BareBaileys> {
  const stock = stockLibsignal()
  let onLine: (line: string) => void = () => undefined
  const announced = new Promise<{ port: number, curveFile: string }>((resolve) => {
    onLine = (line) => { if (line.startsWith('{')) resolve(JSON.parse(line)) }
  })
  const proc = spawnNode(join(ROOT, 'bench', 'lib', 'bare-baileys-main.mjs'), {
    env: {
      BARE_WS_URL: opts.emulator.wsUrl,
      BARE_TRUST_ROOT: opts.emulator.rootPublicKey,
      BARE_CONTROL_URL: opts.emulator.controlUrl,
      BARE_NUMBER: opts.number,
      STOCK_LIBSIGNAL_DIR: stock.dir,
      NODE_EXTRA_CA_CERTS: opts.emulator.caFile
    },
    nodeFlags: ['--import', join(ROOT, 'bench', 'lib', 'stock-libsignal.mjs')],
    logFile: join(opts.dir, 'bare-baileys.log'),
    onStdoutLine: (line) => { onLine(line) }
  })
  void proc.exited.then(stock.rm)
  const info = await Promise.race([
    announced,
    proc.exited.then((code) => { throw new Error(`bare Baileys exited (${code}) before it was linked:\n${proc.tail()}`) }),
    sleep(60_000).then(() => { throw new Error(`bare Baileys not linked after 60 s:\n${proc.tail()}`) })
  ])
  if (sha256(info.curveFile) !== STOCK_CURVE_SHA256) throw new Error(`bare Baileys loaded ${info.curveFile}, not the stock libsignal`)
  return Object.assign(proc, {
    async send (text: string, jids: string[]): Promise<string> {
      const res = await fetch(`http://127.0.0.1:${info.port}/send`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ text, jids }),
        signal: AbortSignal.timeout(170_000)
      })
      const body = await res.text()
      if (!res.ok) throw new Error(`bare Baileys send → ${res.status}: ${body.slice(0, 500)}`)
      return (JSON.parse(body) as { messageId: string }).messageId
    }
  })
}
