/**
 * The driver's side of bench/lib/bare-baileys.mjs: stock Baileys in its own process (no tsx loader,
 * like the compiled service), linked to the emulator by QR, told what to do over stdin.
 */
import { spawn } from 'node:child_process'
import { createWriteStream, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import type { EmulatorApi } from '../../test/support/clients.js'
import { DIE_WITH_PARENT, ROOT, track } from '../../test/support/processes.js'
import { sleep } from '../../test/support/wait.js'

export interface BareBaileys {
  pid: number
  /** sends a text status to these contacts; resolves with its message id */
  sendStatus: (text: string, to: string[]) => Promise<string>
  /** resolves with the time (performance.now() of the driver) the client reported `total` distinct views in all */
  reached: (total: number, timeoutMs: number) => Promise<number>
  stop: () => Promise<void>
}

type Line = { qr: string } | { open: true } | { sent: string } | { reached: number } | { error: string } | { closed: number | null }

export async function startBareBaileys (opts: { dir: string, wsUrl: string, rootPublicKey: string, emu: EmulatorApi, number: string }): Promise<BareBaileys> {
  mkdirSync(opts.dir, { recursive: true })
  const log = createWriteStream(join(opts.dir, 'bare-baileys.log'))
  const child = track(spawn(process.execPath, ['--import', DIE_WITH_PARENT, join(ROOT, 'bench', 'lib', 'bare-baileys.mjs')], {
    cwd: opts.dir,
    env: { ...process.env, BARE_WS_URL: opts.wsUrl, BARE_ROOT: opts.rootPublicKey, BARE_AUTH: join(opts.dir, 'auth') },
    stdio: ['pipe', 'pipe', 'pipe']
  }))
  if (child.pid === undefined) throw new Error('could not spawn the bare Baileys client')
  const waiting: Array<(line: Line) => boolean> = []
  let pending = ''
  child.stderr?.pipe(log)
  child.stdout?.on('data', (chunk: Buffer) => {
    const at = performance.now()
    pending += chunk.toString('utf8')
    let nl: number
    while ((nl = pending.indexOf('\n')) !== -1) {
      const text = pending.slice(0, nl)
      pending = pending.slice(nl + 1)
      log.write(`${text}\n`)
      if (!text.startsWith('{')) continue
      const line = { ...(JSON.parse(text) as Line), receivedAt: at }
      for (let i = 0; i < waiting.length; i++) if (waiting[i](line)) waiting.splice(i--, 1)
    }
  })
  const next = async <T>(pick: (line: Line & { receivedAt: number }) => T | undefined, timeoutMs: number, what: string): Promise<T> =>
    await new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => { reject(new Error(`bare Baileys: no ${what} after ${timeoutMs} ms`)) }, timeoutMs)
      waiting.push((line) => {
        if ('error' in line) { clearTimeout(timer); reject(new Error(`bare Baileys: ${line.error}`)); return true }
        const value = pick(line as Line & { receivedAt: number })
        if (value === undefined) return false
        clearTimeout(timer)
        resolve(value)
        return true
      })
    })
  const send = (cmd: unknown): void => { child.stdin?.write(`${JSON.stringify(cmd)}\n`) }

  await opts.emu.createAccount(opts.number)
  const opened = next((l) => 'open' in l ? true : undefined, 60_000, 'open connection')
  const qr = await next((l) => 'qr' in l ? l.qr : undefined, 30_000, 'QR code')
  await opts.emu.scan(opts.number, qr)
  await opened

  return {
    pid: child.pid,
    sendStatus: async (text, to) => {
      const sent = next((l) => 'sent' in l ? l.sent : undefined, 60_000, 'sent status')
      send({ send: { text, to } })
      return await sent
    },
    reached: async (total, timeoutMs) => {
      const reached = next((l) => 'reached' in l && l.reached === total ? l.receivedAt : undefined, timeoutMs, `${total} views`)
      send({ expect: total })
      return await reached
    },
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return
      child.kill('SIGTERM')
      await Promise.race([new Promise((resolve) => child.once('exit', resolve)), sleep(3000).then(() => { child.kill('SIGKILL') })])
    }
  }
}
