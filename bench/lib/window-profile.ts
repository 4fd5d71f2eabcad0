/**
 * A CPU profile of one window of a running process (`--cpu-prof` covers a whole life, linking included):
 * SIGUSR1 opens the process's inspector on 127.0.0.1:<port>, the Profiler domain records from `start()` to
 * `stop()`, which writes the .cpuprofile and resolves with its path (bench/profile-top.ts reads it).
 * Only for the benchmarks: a process started with `--inspect-port=<port>` takes the signal this way.
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import WebSocket from 'ws'
import { freePort } from '../../test/support/ports.js'
import { waitFor } from '../../test/support/wait.js'

export interface WindowProfile { stop: (file: string) => Promise<string> }

export async function profileWindow (pid: number, port: number): Promise<WindowProfile> {
  process.kill(pid, 'SIGUSR1')
  const target = await waitFor(async () => {
    try {
      const list = await (await fetch(`http://127.0.0.1:${port}/json/list`)).json() as Array<{ webSocketDebuggerUrl: string }>
      return list[0]?.webSocketDebuggerUrl
    } catch { return undefined }
  }, 10_000, `the inspector of ${pid} on ${port}`, 100)
  const ws = new WebSocket(target)
  await new Promise((resolve, reject) => { ws.once('open', resolve); ws.once('error', reject) })
  let id = 0
  const pending = new Map<number, (result: unknown) => void>()
  ws.on('message', (data: Buffer) => {
    const msg = JSON.parse(data.toString()) as { id?: number, result?: unknown }
    if (msg.id !== undefined) pending.get(msg.id)?.(msg.result)
  })
  const call = async <T>(method: string, params: Record<string, unknown> = {}): Promise<T> =>
    await new Promise<T>((resolve) => { pending.set(++id, resolve as (r: unknown) => void); ws.send(JSON.stringify({ id, method, params })) })
  await call('Profiler.enable')
  await call('Profiler.setSamplingInterval', { interval: 200 })
  await call('Profiler.start')
  return {
    async stop (file) {
      const { profile } = await call<{ profile: unknown }>('Profiler.stop')
      writeFileSync(file, JSON.stringify(profile))
      ws.close()
      return file
    }
  }
}

/**
 * Window profiles into `dir` when it is set (a benchmark's BENCH_*_PROFILE), nothing otherwise: the node
 * flags for the process to profile, and `around`, which profiles one piece of work into `<dir>/<name>.cpuprofile`.
 */
export async function windowProfiler (dir: string | undefined, log: (msg: string) => void): Promise<{
  nodeFlags: string[]
  around: <T>(pid: number, name: string, work: () => Promise<T>) => Promise<T>
}> {
  if (dir === undefined) return { nodeFlags: [], around: async (_pid, _name, work) => await work() }
  const port = await freePort()
  return {
    nodeFlags: [`--inspect-port=${port}`],
    async around (pid, name, work) {
      const p = await profileWindow(pid, port)
      try { return await work() } finally { log(`profile ${await p.stop(join(dir, `${name}.cpuprofile`))}`) }
    }
  }
}
