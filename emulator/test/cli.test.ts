import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { testCertPaths } from '../src/index.js'

const here = dirname(fileURLToPath(import.meta.url))

// The CLI's stdout is one JSON line (scripts read it); libsignal prints session records with console.*
// while contacts decrypt. A preloaded module prints the way libsignal does once the CLI is ready.
test('the CLI prints only its ready line on stdout; console output of libraries goes to the log on stderr', { timeout: 30_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'emu-cli-'))
  t.after(() => { rmSync(dir, { recursive: true, force: true }) })
  const noisy = join(dir, 'noisy.mjs')
  // after the ready line (the CLI is running by then), three rounds of what libsignal prints
  writeFileSync(noisy, `const write = process.stdout.write.bind(process.stdout)
  let armed = false
  process.stdout.write = (...args) => {
    const written = write(...args)
    if (!armed) {
      armed = true
      for (const ms of [0, 50, 300]) setTimeout(() => {
        console.info('Closing session:', { rootKey: Buffer.alloc(4, 7) })
        console.warn('Closing open session in favor of incoming prekey bundle')
        console.log('plain log line')
      }, ms)
    }
    return written
  }\n`)
  const child = spawn(process.execPath, ['--import', 'tsx', '--import', noisy, join(here, '..', 'src', 'cli.ts')], {
    cwd: resolve(here, '..', '..'),
    env: { ...process.env, EMULATOR_CERT_DIR: dirname(testCertPaths().certFile), EMULATOR_LOG_LEVEL: 'debug' },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  t.after(() => { if (child.exitCode === null) child.kill('SIGKILL') })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (c: Buffer) => { stdout += c.toString() })
  child.stderr.on('data', (c: Buffer) => { stderr += c.toString() })
  const deadline = Date.now() + 20_000
  while (!(stdout.includes('\n') && (stderr.match(/plain log line/g) ?? []).length >= 3) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  child.kill('SIGTERM')
  await once(child, 'exit')

  const lines = stdout.split('\n').filter((l) => l !== '')
  assert.equal(lines.length, 1, `stdout: ${stdout}`)
  assert.match((JSON.parse(lines[0]) as { wsUrl: string }).wsUrl, /^ws:\/\/127\.0\.0\.1:\d+\/ws\/chat$/)
  const logged = stderr.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { source?: string, method?: string, msg: string, level: number })
  const fromConsole = logged.filter((l) => l.source === 'console')
  assert.equal(fromConsole.length, 9)
  assert.ok(fromConsole.every((l) => l.level === 20), 'at debug')
  assert.ok(fromConsole.some((l) => l.method === 'info' && l.msg.startsWith('Closing session:')))
})
