/**
 * What two V8 heap snapshots (`.heapsnapshot`, e.g. from BENCH_HEAP=1, bench/lib/bench.ts) hold: live bytes
 * by kind of object (node type and constructor or string name), the second against the first, largest
 * growth first. Self sizes (what each object itself occupies), which add up to the snapshot's heap; a
 * snapshot collects garbage first, so both hold only what something still references.
 *
 *   npx tsx bench/heap-diff.ts <before.heapsnapshot> <after.heapsnapshot> [rows=30]
 */
import { readFileSync } from 'node:fs'

interface Snapshot {
  snapshot: { meta: { node_fields: string[], node_types: [string[], ...unknown[]] } }
  nodes: number[]
  strings: string[]
}

export interface HeapSummary { total: number, count: number, byKind: Map<string, { bytes: number, count: number }> }

export function summarizeHeap (file: string): HeapSummary {
  const snap = JSON.parse(readFileSync(file, 'utf8')) as Snapshot
  const fields = snap.snapshot.meta.node_fields
  const types = snap.snapshot.meta.node_types[0]
  const [typeAt, nameAt, sizeAt] = ['type', 'name', 'self_size'].map((f) => fields.indexOf(f))
  const byKind = new Map<string, { bytes: number, count: number }>()
  let total = 0
  let count = 0
  for (let i = 0; i < snap.nodes.length; i += fields.length) {
    const type = types[snap.nodes[i + typeAt]]
    const size = snap.nodes[i + sizeAt]
    // strings by their type only (their text would make one kind per string)
    const name = type === 'string' || type === 'concatenated string' || type === 'sliced string' ? '' : snap.strings[snap.nodes[i + nameAt]].slice(0, 60)
    const key = `${type} ${name}`.trim()
    const k = byKind.get(key) ?? { bytes: 0, count: 0 }
    k.bytes += size
    k.count++
    byKind.set(key, k)
    total += size
    count++
  }
  return { total, count, byKind }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [beforeFile, afterFile, rowsArg] = process.argv.slice(2)
  if (beforeFile === undefined || afterFile === undefined) {
    console.error('usage: tsx bench/heap-diff.ts <before.heapsnapshot> <after.heapsnapshot> [rows]')
    process.exit(2)
  }
  const a = summarizeHeap(beforeFile)
  const b = summarizeHeap(afterFile)
  const MB = (n: number): string => (n / 1024 / 1024).toFixed(2).padStart(8)
  console.log(`live heap: ${MB(a.total)} MB in ${a.count} objects → ${MB(b.total)} MB in ${b.count} objects`)
  const keys = new Set([...a.byKind.keys(), ...b.byKind.keys()])
  const rows = [...keys].map((k) => {
    const x = a.byKind.get(k) ?? { bytes: 0, count: 0 }
    const y = b.byKind.get(k) ?? { bytes: 0, count: 0 }
    return { k, before: x.bytes, after: y.bytes, grew: y.bytes - x.bytes, countGrew: y.count - x.count }
  }).sort((p, q) => q.grew - p.grew)
  console.log('\n   before MB    after MB     grew MB  objects  kind')
  for (const r of rows.slice(0, Number(rowsArg ?? 30))) console.log(`${MB(r.before)}    ${MB(r.after)}    ${MB(r.grew)}  ${String(r.countGrew).padStart(7)}  ${r.k}`)
}
