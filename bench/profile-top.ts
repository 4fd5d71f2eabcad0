/**
 * Top frames of a V8 .cpuprofile (from `node --cpu-prof`): self time by function and by package,
 * and inclusive time of the functions that matter most.
 *
 *   npx tsx bench/profile-top.ts <file.cpuprofile> [rows=25]
 */
import { readFileSync } from 'node:fs'

interface CallFrame { functionName: string, url: string, lineNumber: number }
interface ProfileNode { id: number, callFrame: CallFrame, children?: number[] }
interface CpuProfile { nodes: ProfileNode[], samples: number[], timeDeltas: number[], startTime: number, endTime: number }

export interface ProfileSummary {
  totalMs: number
  idleMs: number
  byFunction: Array<[string, number]>
  byPackage: Array<[string, number]>
  inclusive: Array<[string, number]>
}

function where (frame: CallFrame): string {
  const url = frame.url.replace(/^file:\/\//, '')
  const nm = url.lastIndexOf('/node_modules/')
  const short = nm === -1 ? url.replace(/^.*\/(src|plugins|schemas|test|bench)\//, '$1/') : url.slice(nm + 14)
  return `${short}:${frame.lineNumber + 1}`
}

function packageOf (frame: CallFrame): string {
  const url = frame.url
  if (url === '') return frame.functionName === '(garbage collector)' ? '(gc)' : frame.functionName === '(idle)' ? '(idle)' : '(native/vm)'
  if (url.startsWith('node:')) return 'node:internal'
  const nm = url.lastIndexOf('/node_modules/')
  if (nm === -1) return /\/(src|plugins|schemas)\//.test(url) ? 'service (src, plugins, schemas)' : 'other'
  const rest = url.slice(nm + 14).split('/')
  return rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]
}

export function summarize (profile: CpuProfile, rows = 25): ProfileSummary {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]))
  const parent = new Map<number, number>()
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id)
  const selfUs = new Map<number, number>()
  profile.samples.forEach((id, i) => { selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)) })

  const fn = new Map<string, number>()
  const pkg = new Map<string, number>()
  const incl = new Map<string, number>()
  let total = 0
  let idle = 0
  for (const [id, us] of selfUs) {
    const node = byId.get(id)
    if (node === undefined) continue
    total += us
    const f = node.callFrame
    if (f.functionName === '(idle)') { idle += us; continue }
    const key = `${f.functionName || '(anonymous)'} ${where(f)}`
    fn.set(key, (fn.get(key) ?? 0) + us)
    pkg.set(packageOf(f), (pkg.get(packageOf(f)) ?? 0) + us)
    // inclusive: every distinct frame on the stack gets the sample once
    const seen = new Set<string>()
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const cf = byId.get(cur)?.callFrame
      if (cf === undefined || cf.url === '') continue
      const k = `${cf.functionName || '(anonymous)'} ${where(cf)}`
      if (seen.has(k)) continue
      seen.add(k)
      incl.set(k, (incl.get(k) ?? 0) + us)
    }
  }
  const top = (m: Map<string, number>): Array<[string, number]> =>
    [...m].sort((a, b) => b[1] - a[1]).slice(0, rows).map(([k, v]) => [k, v / 1000])
  return { totalMs: total / 1000, idleMs: idle / 1000, byFunction: top(fn), byPackage: top(pkg), inclusive: top(incl) }
}

export function formatSummary (s: ProfileSummary): string {
  const busy = s.totalMs - s.idleMs
  const pct = (ms: number): string => `${(100 * ms / Math.max(busy, 1)).toFixed(1).padStart(5)} %`
  const lines = [`profiled ${s.totalMs.toFixed(0)} ms, busy ${busy.toFixed(0)} ms (idle ${s.idleMs.toFixed(0)} ms)`, '', 'self time by package:']
  for (const [k, ms] of s.byPackage) lines.push(`  ${ms.toFixed(0).padStart(7)} ms ${pct(ms)}  ${k}`)
  lines.push('', 'self time by function:')
  for (const [k, ms] of s.byFunction) lines.push(`  ${ms.toFixed(0).padStart(7)} ms ${pct(ms)}  ${k}`)
  lines.push('', 'inclusive time (frames with source):')
  for (const [k, ms] of s.inclusive) lines.push(`  ${ms.toFixed(0).padStart(7)} ms ${pct(ms)}  ${k}`)
  return lines.join('\n')
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const file = process.argv[2]
  if (file === undefined) {
    console.error('usage: tsx bench/profile-top.ts <file.cpuprofile> [rows]')
    process.exit(2)
  }
  console.log(formatSummary(summarize(JSON.parse(readFileSync(file, 'utf8')) as CpuProfile, Number(process.argv[3] ?? 25))))
}
