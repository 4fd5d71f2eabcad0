import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import type { TestContext } from 'node:test'
import { fileURLToPath } from 'node:url'
import { waitFor } from '../helper.js'

// The service as a real child process (`node --import tsx src/server.ts`), as `npm start` runs it, with
// its stdout kept line by line. It runs in a temporary folder (so no developer's .env is read) that holds
// its data and uploads.

const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)))
const TSX = import.meta.resolve('tsx')

export interface ServiceProcess {
  base: string
  dir: string
  /** every stdout line so far */
  stdout: string[]
  stderr: string[]
  stop: () => Promise<void>
}

export async function freePort (): Promise<number> {
  return await new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      const port = typeof address === 'object' && address !== null ? address.port : 0
      server.close(() => { resolve(port) })
    })
  })
}

export async function startService (t: TestContext, env: Record<string, string>): Promise<ServiceProcess> {
  const dir = mkdtempSync(join(tmpdir(), 'st-service-'))
  const port = await freePort()
  const inherited: Record<string, string> = {}
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !/^(API_KEY|DATA_DIR|UPLOAD_DIR|LOG_LEVEL|PORT|HOST|ALLOW_PRIVATE_URLS|WA_.*|NODE_V8_COVERAGE)$/.test(k)) inherited[k] = v
  const child = spawn(process.execPath, ['--import', TSX, join(ROOT, 'src', 'server.ts')], {
    cwd: dir,
    env: { ...inherited, TSX_TSCONFIG_PATH: join(ROOT, 'tsconfig.json'), PORT: String(port), HOST: '127.0.0.1', DATA_DIR: join(dir, 'data'), UPLOAD_DIR: join(dir, 'uploads'), ...env },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  const stdout: string[] = []
  const stderr: string[] = []
  const lines = (into: string[]) => {
    let pending = ''
    return (chunk: Buffer) => {
      pending += chunk.toString('utf8')
      let nl: number
      while ((nl = pending.indexOf('\n')) !== -1) { into.push(pending.slice(0, nl)); pending = pending.slice(nl + 1) }
    }
  }
  child.stdout.on('data', lines(stdout))
  child.stderr.on('data', lines(stderr))
  const exited = new Promise<void>((resolve) => { child.once('exit', () => { resolve() }) })
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM')
      const timer = setTimeout(() => { child.kill('SIGKILL') }, 10_000)
      await exited
      clearTimeout(timer)
    }
  }
  t.after(async () => { await stop(); rmSync(dir, { recursive: true, force: true }) })
  const base = `http://127.0.0.1:${port}`
  await waitFor(() => {
    if (child.exitCode !== null) throw new Error(`the service exited (${child.exitCode}): ${stderr.join('\n')}\n${stdout.slice(-20).join('\n')}`)
    return stdout.some((l) => l.includes('Server listening'))
  }, 30_000, 'the service to listen')
  return { base, dir, stdout, stderr, stop }
}
