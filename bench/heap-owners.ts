/**
 * Who holds the objects of one kind in a V8 heap snapshot: each object's chain of first strong retainers
 * (system and array hops skipped), grouped, largest first. What bench/heap-diff.ts shows grew, this says
 * where it hangs (issue 33's audit of an idle session, bench/NOTES.md).
 *
 *   npx tsx bench/heap-owners.ts <file.heapsnapshot> "<kind>" [depth=3] [rows=25]
 *     kind: as heap-diff prints it ("object Map", "array (object elements)"), or "string:<prefix>"
 *
 * A big snapshot wants `node --max-old-space-size=6000 --import tsx bench/heap-owners.ts …`.
 */
import { readFileSync } from 'node:fs'

interface Snapshot {
  snapshot: { meta: { node_fields: string[], edge_fields: string[], node_types: [string[], ...unknown[]], edge_types: [string[], ...unknown[]] } }
  nodes: number[]
  edges: number[]
  strings: string[]
}

const [file, kind, depthArg, rowsArg] = process.argv.slice(2)
if (file === undefined || kind === undefined) {
  console.error('usage: tsx bench/heap-owners.ts <file.heapsnapshot> "<kind>" [depth] [rows]')
  process.exit(2)
}
const depth = Number(depthArg ?? 3)
const snap = JSON.parse(readFileSync(file, 'utf8')) as Snapshot
const { node_fields: nf, edge_fields: ef } = snap.snapshot.meta
const ntypes = snap.snapshot.meta.node_types[0]
const etypes = snap.snapshot.meta.edge_types[0]
const N = nf.length
const E = ef.length
const { nodes, edges, strings } = snap
const count = nodes.length / N
const [ti, ni, eci, si] = ['type', 'name', 'edge_count', 'self_size'].map((f) => nf.indexOf(f))
const [eti, eni, eto] = ['type', 'name_or_index', 'to_node'].map((f) => ef.indexOf(f))

// each node's first strong retainer and the edge it holds it by
const retainer = new Int32Array(count).fill(-1)
const byEdge = new Int32Array(count).fill(-1)
for (let n = 0, e = 0; n < count; n++) {
  const ec = nodes[n * N + eci]
  for (let k = 0; k < ec; k++, e += E) {
    const t = etypes[edges[e + eti]]
    if (t === 'weak' || t === 'shortcut') continue
    const to = edges[e + eto] / N
    if (retainer[to] === -1) { retainer[to] = n; byEdge[to] = e }
  }
}
const nameOf = (n: number): string => {
  const t = ntypes[nodes[n * N + ti]]
  return t === 'string' ? 'string' : `${t} ${strings[nodes[n * N + ni]].slice(0, 40)}`
}
const edgeName = (e: number): string => {
  const t = etypes[edges[e + eti]]
  return t === 'element' || t === 'hidden' ? `[${t}]` : String(strings[edges[e + eni]]).slice(0, 30)
}
const wanted = kind.startsWith('string:')
  ? (n: number) => ntypes[nodes[n * N + ti]] === 'string' && strings[nodes[n * N + ni]].startsWith(kind.slice(7))
  : (n: number) => nameOf(n) === kind

const groups = new Map<string, { count: number, bytes: number }>()
for (let n = 0; n < count; n++) {
  if (!wanted(n)) continue
  const chain: string[] = []
  for (let cur = n, hops = 0; hops < depth * 3 && chain.length < depth; hops++) {
    const r = retainer[cur]
    if (r === -1) break
    const name = nameOf(r)
    if (!/^(array|hidden|object system|code)/.test(name) || hops > depth * 2) chain.push(`${name}.${edgeName(byEdge[cur])}`)
    cur = r
  }
  const key = chain.join(' <- ')
  const g = groups.get(key) ?? { count: 0, bytes: 0 }
  g.count++
  g.bytes += nodes[n * N + si]
  groups.set(key, g)
}
console.log('  objects        KB  held by (first strong retainers, nearest first)')
for (const [k, g] of [...groups].sort((a, b) => b[1].bytes - a[1].bytes).slice(0, Number(rowsArg ?? 25))) {
  console.log(`${String(g.count).padStart(9)} ${(g.bytes / 1024).toFixed(0).padStart(9)}  ${k}`)
}
