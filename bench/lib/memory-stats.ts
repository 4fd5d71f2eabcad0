/** The service's memory as its own /metrics reports it (prom-client's default Node.js metrics). */
import { API_KEY } from '../../test/support/service.js'

export interface MemoryStats { heapUsed: number, heapTotal: number, external: number }

const METRICS: Record<keyof MemoryStats, string> = {
  heapUsed: 'nodejs_heap_size_used_bytes',
  heapTotal: 'nodejs_heap_size_total_bytes',
  external: 'nodejs_external_memory_bytes'
}

export async function serviceMemory (base: string): Promise<MemoryStats> {
  const res = await fetch(`${base}/metrics`, { headers: { 'x-api-key': API_KEY }, signal: AbortSignal.timeout(10_000) })
  if (!res.ok) throw new Error(`GET /metrics → ${res.status}`)
  const text = await res.text()
  const read = (name: string): number => {
    const m = new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text)
    return m === null ? Number.NaN : Number(m[1])
  }
  return { heapUsed: read(METRICS.heapUsed), heapTotal: read(METRICS.heapTotal), external: read(METRICS.external) }
}

export const mb = (bytes: number): string => (bytes / 1024 / 1024).toFixed(0)
