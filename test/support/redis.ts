import { connect } from 'node:net'
import { freePort } from '../helper.js'
import { requireBinary, startProcess, tempFolder } from './server-process.js'

// A private Redis for tests: redis-server on a free loopback port, working folder in a temporary folder,
// no persistence (`--save ''`, `--appendonly no`). stop() ends it and removes the folder.

export interface PrivateRedis {
  /** redis://127.0.0.1:<port> */
  url: string
  port: number
  stop: () => Promise<void>
}

export async function startRedis (): Promise<PrivateRedis> {
  const bin = requireBinary(process.env.REDIS_SERVER ?? '/usr/bin/redis-server', 'redis-server')
  for (let attempt = 1; ; attempt++) {
    const dir = tempFolder('st-redis-')
    const port = await freePort()
    const server = startProcess(bin, [
      '--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no',
      '--daemonize', 'no', '--protected-mode', 'yes', '--unixsocket', '', '--logfile', ''
    ], dir)
    if (await waitReady(port, () => server.child.exitCode !== null)) {
      return { url: `redis://127.0.0.1:${port}`, port, stop: async () => { await server.stop('SIGTERM') } }
    }
    const log = server.output()
    await server.stop('SIGKILL')
    if (attempt < 3 && /Address already in use/i.test(log)) continue
    throw new Error(`private Redis did not start:\n${log}`)
  }
}

/** PING until +PONG (bounded: 15 s) or the process is gone. */
async function waitReady (port: number, exited: () => boolean): Promise<boolean> {
  const deadline = Date.now() + 15_000
  while (Date.now() < deadline && !exited()) {
    if (await ping(port)) return true
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  return false
}

export async function ping (port: number): Promise<boolean> {
  return await new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port })
    let reply = ''
    const done = (ok: boolean): void => { socket.destroy(); resolve(ok) }
    socket.setTimeout(1000, () => { done(false) })
    socket.once('error', () => { done(false) })
    socket.once('connect', () => { socket.write('PING\r\n') })
    socket.on('data', (b) => { reply += b.toString(); if (reply.includes('\r\n')) done(reply.startsWith('+PONG')) })
  })
}
