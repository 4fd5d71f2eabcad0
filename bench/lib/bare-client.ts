/**
 * The driver's side of bench/lib/bare-baileys.mjs: stock Baileys in its own process (no tsx loader,
 * like the compiled service), one socket or a fleet, each linked to the emulator by QR, told what to do
 * over stdin.
 */
import { spawn } from 'node:child_process'
import { createWriteStream, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { mapLimit, type EmulatorApi } from '../../test/support/clients.js'
import { DIE_WITH_PARENT, ROOT, track } from '../../test/support/processes.js'
import { sleep } from '../../test/support/wait.js'

export interface BareFleet {
  pid: number
  /** creates each account in the emulator, opens a socket for it and scans its QR, `concurrency` at a time */
  link: (specs: Array<{ id: string, number: string }>, concurrency: number) => Promise<void>
  /** sends a text status from socket `id` to these contacts; resolves with its message id */
  sendStatus: (id: string, text: string, to: string[]) => Promise<string>
  /** sockets open now (as last reported) */
  openCount: () => number
  /** resolves with the time (performance.now() of the driver) the process reported `total` distinct views in all */
  reached: (total: number, timeoutMs: number) => Promise<number>
  stop: () => Promise<void>
}

export interface BareBaileys extends Omit<BareFleet, 'link' | 'sendStatus' | 'openCount'> {
  sendStatus: (text: string, to: string[]) => Promise<string>
}

interface Options { dir: string, wsUrl: string, rootPublicKey: string, emu: EmulatorApi }
type Said = { qr: string } | { open: true } | { sent: string } | { reached: number } | { error: string } | { closed: number | null }
type Line = { id?: string, receivedAt: number } & Said
/** DisconnectReason.loggedOut */
const LOGGED_OUT = 401

/** The bare Baileys process with no socket yet. */
export async function startBareFleet (opts: Options): Promise<BareFleet> {
  mkdirSync(opts.dir, { recursive: true })
  const log = createWriteStream(join(opts.dir, 'bare-baileys.log'))
  const child = track(spawn(process.execPath, ['--import', DIE_WITH_PARENT, join(ROOT, 'bench', 'lib', 'bare-baileys.mjs')], {
    cwd: opts.dir,
    env: { ...process.env, BARE_WS_URL: opts.wsUrl, BARE_ROOT: opts.rootPublicKey, BARE_AUTH: join(opts.dir, 'auth') },
    stdio: ['pipe', 'pipe', 'pipe']
  }))
  if (child.pid === undefined) throw new Error('could not spawn the bare Baileys client')
  const waiting: Array<(line: Line) => boolean> = []
  const open = new Set<string>()
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
      if (line.id !== undefined && 'open' in line) open.add(line.id)
      if (line.id !== undefined && 'closed' in line) open.delete(line.id)
      for (let i = 0; i < waiting.length; i++) if (waiting[i](line)) waiting.splice(i--, 1)
    }
  })
  /** the next line of socket `id` (undefined: of the process) that `pick` takes; an error line of it fails */
  const next = async <T>(id: string | undefined, pick: (line: Line) => T | undefined, timeoutMs: number, what: string): Promise<T> =>
    await new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => { reject(new Error(`bare Baileys: no ${what} after ${timeoutMs} ms`)) }, timeoutMs)
      waiting.push((line) => {
        if (line.id !== id) return false
        if ('error' in line) { clearTimeout(timer); reject(new Error(`bare Baileys ${id ?? ''}: ${line.error}`)); return true }
        const value = pick(line)
        if (value === undefined) return false
        clearTimeout(timer)
        resolve(value)
        return true
      })
    })
  const send = (cmd: unknown): void => { child.stdin?.write(`${JSON.stringify(cmd)}\n`) }

  /** the socket that linked each fleet id (another than the id's own after a retry) */
  const socketOf = new Map<string, string>()
  const linkOne = async (socketId: string, number: string): Promise<void> => {
    const opened = next(socketId, (l) => 'open' in l ? 'open' : 'closed' in l && l.closed === LOGGED_OUT ? 'logged out' : undefined, 60_000, `open connection of ${socketId}`)
    opened.catch(() => undefined)
    const qr = next(socketId, (l) => 'qr' in l ? l.qr : undefined, 30_000, `QR code of ${socketId}`)
    send({ open: socketId })
    await opts.emu.scan(number, await qr)
    if (await opened !== 'open') throw new Error(`bare Baileys ${socketId}: logged out before it opened`)
  }

  return {
    pid: child.pid,
    link: async (specs, concurrency) => {
      await mapLimit(specs, concurrency, async ({ id, number }) => {
        await opts.emu.createAccount(number)
        // a busy process can lose the connection between the scan and the restart that follows, and that
        // half-linked socket is then logged out (401): up to two more tries, each a socket with a fresh folder
        for (let attempt = 0; ; attempt++) {
          const socketId = attempt === 0 ? id : `${id}.${attempt}`
          try {
            await linkOne(socketId, number)
            socketOf.set(id, socketId)
            return
          } catch (err) {
            if (attempt === 2) throw err
            log.write(`link of ${id} failed (${String(err)}): again\n`)
          }
        }
      })
    },
    openCount: () => open.size,
    sendStatus: async (id, text, to) => {
      const sent = next(socketOf.get(id) ?? id, (l) => 'sent' in l ? l.sent : undefined, 60_000, `sent status of ${id}`)
      send({ send: { id: socketOf.get(id) ?? id, text, to } })
      return await sent
    },
    reached: async (total, timeoutMs) => {
      const reached = next(undefined, (l) => 'reached' in l && l.reached === total ? l.receivedAt : undefined, timeoutMs, `${total} views`)
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

/** One bare Baileys socket in its own process, linked to the emulator as `number`. */
export async function startBareBaileys (opts: Options & { number: string }): Promise<BareBaileys> {
  const fleet = await startBareFleet(opts)
  await fleet.link([{ id: '0', number: opts.number }], 1)
  return { ...fleet, sendStatus: async (text, to) => await fleet.sendStatus('0', text, to) }
}
