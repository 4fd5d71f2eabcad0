import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test, type TestContext } from 'node:test'
import { BLOCK_END, BLOCK_START } from '../../scripts/demo-walkthrough.js'
import { freePort } from '../support/ports.js'
import { ROOT, spawnNode, tempDir, track } from '../support/processes.js'
import { waitFor } from '../support/wait.js'

// The README's three commands: `npm install`, `npm run demo`, and the block the demo prints, pasted whole into
// a second terminal. Here the demo runs as a real child process (scripts/demo.ts, the service as its own child,
// the emulator in it, all on loopback); the block is cut from its stdout and run as one bash script, on a first
// run of the demo and on a second one over the same folder (issue 42: the second run's session step answered
// 409, and the block, pasted at once, posted before the link was open).

interface Run { out: string, key: string }

async function demoRun (t: TestContext, dir: string, port: number, logFile: string): Promise<Run> {
  let out = ''
  const demo = spawnNode(join(ROOT, 'scripts', 'demo.ts'), {
    env: { PORT: String(port), DEMO_DATA_DIR: dir, LOG_LEVEL: 'warn', EMULATOR_LOG_LEVEL: 'warn', API_KEY: '' },
    logFile,
    onStdoutLine: (line) => { out += line + '\n' }
  })
  // SIGTERM: the demo stops the service (waiting for it, so the port is free for the next run) and the emulator
  t.after(async () => { await demo.stop(20_000) })
  const exited = demo.exited.then((code) => { throw new Error(`the demo exited (${String(code)}) before printing its block:\n${demo.tail()}`) })
  await Promise.race([exited, waitFor(() => out.includes(BLOCK_END), 240_000, 'the demo\'s block', 100)])
  exited.catch(() => undefined) // once the block is out, the demo's exit is the after hook's
  const key = /^ {2}API key {7}(\S+)$/m.exec(out)?.[1]
  assert.ok(key !== undefined, out)
  return { out, key }
}

/** The printed block, from its first marker to its last, as a user would select it. */
function blockOf (out: string): string {
  const start = out.indexOf(BLOCK_START)
  const end = out.indexOf(BLOCK_END)
  assert.ok(start !== -1 && end > start, out)
  return out.slice(start, end + BLOCK_END.length) + '\n'
}

/** bash on the block as one script; at most 300 s (each of its four waits is bounded to 60 s). */
async function runBlock (block: string, file: string): Promise<{ code: number | null, out: string }> {
  writeFileSync(file, block)
  const child = spawn('bash', [file], { stdio: ['ignore', 'pipe', 'pipe'] })
  track(child)
  let out = ''
  child.stdout.on('data', (c: Buffer) => { out += c.toString() })
  child.stderr.on('data', (c: Buffer) => { out += c.toString() })
  const timer = setTimeout(() => { child.kill('SIGKILL') }, 300_000)
  const code = await new Promise<number | null>((resolve) => { child.once('exit', resolve) })
  clearTimeout(timer)
  return { code, out }
}

/** The block's last line: the service's answer to GET …/status-viewers/{id}. */
function viewersOf (out: string): Array<{ number: string, isReal: boolean }> {
  const last = out.trimEnd().split('\n').at(-1) ?? ''
  const body = JSON.parse(last) as { success: boolean, data: Array<{ number: string, isReal: boolean }> }
  assert.equal(body.success, true, out)
  return body.data
}

test('npm run demo, twice over the same folder: the printed block, pasted whole, links, posts and shows the viewer', { timeout: 1_200_000 }, async (t) => {
  const tmp = tempDir('st-demo-')
  t.after(() => { tmp.rm() })
  const dir = join(tmp.path, 'demo')
  const port = await freePort()

  const runs: Run[] = []
  for (const n of [1, 2]) {
    await t.test(`run ${n}`, async (tt) => {
      const run = await demoRun(tt, dir, port, join(tmp.path, `demo-${n}.log`))
      runs.push(run)
      const block = blockOf(run.out)
      // the block names this run's key and ports, nothing else
      assert.ok(block.includes(`K=${run.key};`))
      assert.ok(block.includes(`B=http://127.0.0.1:${port}/api;`))
      assert.doesNotMatch(block, /\bexit\b/, 'a pasted exit would close the terminal')
      const { code, out } = await runBlock(block, join(tmp.path, `block-${n}.sh`))
      assert.equal(code, 0, out)
      assert.doesNotMatch(out, /not connected|already exists/i, out)
      assert.match(out, /"connected":true/, out)
      assert.deepEqual(viewersOf(out).map((v) => [v.number, v.isReal]), [['15550002222', true]], out)
      if (n === 2) {
        // pasted again in the same run: the emulator says its phone and contact exist; the session is made anew
        const again = await runBlock(block, join(tmp.path, `block-${n}-again.sh`))
        assert.equal(again.code, 0, again.out)
        assert.doesNotMatch(again.out, /not connected|Session already exists/i, again.out)
        assert.deepEqual(viewersOf(again.out).map((v) => [v.number, v.isReal]), [['15550002222', true]], again.out)
      }
    })
  }
  // the key stays from run to run (the folder is emptied but for it), and the second run started clean
  assert.equal(runs.length, 2)
  assert.equal(runs[1]?.key, runs[0]?.key)
  assert.equal(readFileSync(join(dir, 'api-key'), 'utf8').trim(), runs[0]?.key)
})

test('npm run demo refuses a folder it did not make (it empties its folder at start) and leaves it as it was', { timeout: 120_000 }, async (t) => {
  const tmp = tempDir('st-demo-foreign-')
  t.after(() => { tmp.rm() })
  const dir = join(tmp.path, 'mine')
  mkdirSync(dir)
  writeFileSync(join(dir, 'notes.txt'), 'keep me')
  const demo = spawnNode(join(ROOT, 'scripts', 'demo.ts'), { env: { PORT: String(await freePort()), DEMO_DATA_DIR: dir }, logFile: join(tmp.path, 'demo.log') })
  t.after(async () => { await demo.stop() })
  assert.equal(await demo.exited, 1)
  assert.match(demo.tail(), /holds files the demo did not make/)
  assert.ok(existsSync(join(dir, 'notes.txt')))
})
