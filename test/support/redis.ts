import { realpathSync } from 'node:fs'
import { connect } from 'node:net'
import { freePort } from './ports.js'
import { requireBinary, skipWithout, startProcess, tempFolder } from './server-process.js'

// A private Redis for tests: redis-server on a free loopback port, working folder in a temporary folder,
// no persistence (`--save ''`, `--appendonly no`). stop() ends it and removes the folder. The binary is
// Debian's (package redis-server; REDIS_SERVER overrides the path): a test that needs it passes
// `{ skip: skipWithoutRedis }`, which skips it with one line naming the package where it is missing, except
// under CI, where the test runs and fails.

/** The redis-server binary the tests start. */
export const REDIS_SERVER = process.env.REDIS_SERVER !== undefined && process.env.REDIS_SERVER !== '' ? process.env.REDIS_SERVER : '/usr/bin/redis-server'

/** node:test's `skip` for a test that needs Redis (see above). */
export const skipWithoutRedis = skipWithout(REDIS_SERVER, 'redis-server', 'Redis')

export interface PrivateRedis {
  /** redis://127.0.0.1:<port> */
  url: string
  port: number
  stop: () => Promise<void>
}

/** `port`: the first port to try (tests of this module); a free one otherwise, and after a failed bind. */
export async function startRedis (opts: { port?: number } = {}): Promise<PrivateRedis> {
  const bin = requireBinary(REDIS_SERVER, 'redis-server')
  for (let attempt = 1; ; attempt++) {
    const dir = tempFolder('st-redis-')
    const port = attempt === 1 && opts.port !== undefined ? opts.port : await freePort()
    const server = startProcess(bin, [
      '--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no',
      '--daemonize', 'no', '--protected-mode', 'yes', '--unixsocket', '', '--logfile', ''
    ], dir)
    if (await waitReady(port, dir, () => server.child.exitCode !== null)) {
      return { url: `redis://127.0.0.1:${port}`, port, stop: async () => { await server.stop('SIGTERM') } }
    }
    const log = server.output()
    await server.stop('SIGKILL')
    if (attempt < 3 && /Address already in use/i.test(log)) continue
    throw new Error(`private Redis did not start:\n${log}`)
  }
}

/**
 * Asks for the working folder until this server answers (bounded: 15 s) or its process is gone. Another
 * test file's private Redis can hold the port when two starts got it from freePort() at once; it answers
 * too, with its own folder, and is not ours.
 */
async function waitReady (port: number, dir: string, exited: () => boolean): Promise<boolean> {
  const deadline = Date.now() + 15_000
  const ours = realpathSync(dir)
  while (Date.now() < deadline && !exited()) {
    if (await servedDir(port) === ours) return true
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  return false
}

/** The working folder of the Redis on the port (`CONFIG GET dir`), or null when nothing answers it. */
async function servedDir (port: number): Promise<string | null> {
  return await new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port })
    let reply = ''
    const done = (dir: string | null): void => { socket.destroy(); resolve(dir) }
    socket.setTimeout(1000, () => { done(null) })
    socket.once('error', () => { done(null) })
    socket.once('connect', () => { socket.write('CONFIG GET dir\r\n') })
    // *2 $3 dir $<n> <dir>: five lines
    socket.on('data', (b) => {
      reply += b.toString()
      const lines = reply.split('\r\n')
      if (reply.startsWith('-')) done(null)
      else if (lines.length > 5) done(lines[4])
    })
  })
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
