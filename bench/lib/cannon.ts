/** autocannon in its own process against one URL with the benchmark key; its JSON result. */
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { API_KEY, track } from './procs.js'

const AUTOCANNON = fileURLToPath(import.meta.resolve('autocannon'))

export interface CannonResult {
  requests: { average: number, total: number }
  latency: { p50: number, p99: number, max: number }
  throughput: { average: number }
  errors: number
  timeouts: number
  non2xx: number
}

export async function autocannon (url: string, seconds: number, connections: number): Promise<CannonResult> {
  const child = track(spawn(process.execPath, [AUTOCANNON, '-j', '-c', String(connections), '-d', String(seconds), '-H', `x-api-key=${API_KEY}`, url], {
    stdio: ['ignore', 'pipe', 'pipe']
  }))
  let out = ''
  let err = ''
  child.stdout?.on('data', (c: Buffer) => { out += c.toString() })
  child.stderr?.on('data', (c: Buffer) => { err += c.toString() })
  const timer = setTimeout(() => { child.kill('SIGKILL') }, (seconds + 30) * 1000)
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve))
  clearTimeout(timer)
  if (code !== 0) throw new Error(`autocannon exited ${code}: ${err.slice(-500)}`)
  return JSON.parse(out) as CannonResult
}
