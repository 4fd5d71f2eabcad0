import assert from 'node:assert/strict'
import { readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
// the driver the service picks for this Node (better-sqlite3 12 aborts Node 24.19+ when it is collected)
import { SQLite } from '../../src/db/sqlite/driver.js'
import { tempDir } from '../support/processes.js'
import { API_KEY, spawnService, type ServiceProc } from '../support/service.js'
import { sleep } from '../support/wait.js'
import { png } from './fixtures.js'

// Issue 11, uploads: SIGKILL at arbitrary moments while uploads stream in, then a restart on the same
// folders. Every upload must be a complete file with its row, or neither; every upload that was answered
// 200 before the kill must be there, whole.

const STORED = /^[0-9]{1,16}-[0-9a-f]{12}-/

test('uploads: SIGKILL in the middle of uploads leaves each one complete with its row, or neither', { timeout: 120_000 }, async (t) => {
  const work = tempDir('st-upload-crash-')
  t.after(() => { work.rm() })
  const procs: ServiceProc[] = []
  t.after(async () => { await Promise.all(procs.map(async (p) => await p.stop(2000))) })
  // no session exists, so no platform is ever dialled
  const start = async (name: string): Promise<ServiceProc> => {
    const proc = await spawnService({ dir: work.path, name })
    procs.push(proc)
    return proc
  }
  // a real PNG head and enough bytes that streaming, fsync and rename each take a moment
  const body = Buffer.concat([png(), Buffer.alloc(400_000, 1)])
  const uploadDir = join(work.path, 'uploads')

  const check = (answered: Map<string, number>): { files: number } => {
    const entries = readdirSync(uploadDir)
    assert.deepEqual(entries.filter((f) => f.endsWith('.part')), [], 'no unfinished upload left')
    const files = entries.filter((f) => STORED.test(f)).sort()
    const db = new SQLite(join(work.path, 'data', 'status-tracker.db'))
    try {
      const rows = db.prepare('select filename, size from uploads order by filename').all() as Array<{ filename: string, size: number }>
      assert.deepEqual(rows.map((r) => r.filename), files, 'every file has its row and every row its file')
      for (const r of rows) assert.equal(statSync(join(uploadDir, r.filename)).size, r.size, `${r.filename} is complete`)
      for (const [name, size] of answered) assert.equal(rows.find((r) => r.filename === name)?.size, size, `answered upload ${name} kept`)
    } finally {
      db.close()
    }
    return { files: files.length }
  }

  const answered = new Map<string, number>()
  let svc = await start('first')
  for (const [round, killAfterMs] of [[1, 350], [2, 700]] as const) {
    const victim = svc
    let stop = false
    const uploader = async (): Promise<void> => {
      while (!stop) {
        const form = new FormData()
        form.append('image', new Blob([body], { type: 'image/png' }), `round${round}.png`)
        try {
          const res = await fetch(`${victim.base}/api/upload-image`, { method: 'POST', headers: { 'x-api-key': API_KEY }, body: form })
          if (res.ok) answered.set((await res.json() as { filename: string }).filename, body.length)
        } catch {
          return
        }
      }
    }
    const running = Array.from({ length: 4 }, uploader)
    await sleep(killAfterMs)
    // the last round kills only once some uploads were answered (a loaded machine may not have answered
    // any by then), with others still in flight: bounded
    for (const deadline = Date.now() + 30_000; round === 2 && answered.size === 0 && Date.now() < deadline;) await sleep(20)
    victim.child.kill('SIGKILL')
    await victim.exited
    stop = true
    await Promise.all(running)
    svc = await start(`after-kill-${round}`)
    const { files } = check(answered)
    t.diagnostic(`round ${round}: ${answered.size} uploads answered so far, ${files} stored after the restart`)
  }
  assert.ok(answered.size > 0, 'some uploads completed before the kills')
})
