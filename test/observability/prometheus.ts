// A strict parser for the Prometheus text exposition format 0.0.4, the way a scraper reads it:
// every sample belongs to a family declared by # TYPE before it, no series twice, histogram buckets
// cumulative with +Inf equal to _count. Throws with the line number on anything else.

export type MetricType = 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped'

export interface Sample { name: string, labels: Record<string, string>, value: number }
export interface Family { name: string, type: MetricType, help: string, samples: Sample[] }

const NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*'
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped'])

/** As Prometheus reads values (Go's strconv.ParseFloat): NaN and Inf in any case (prom-client writes `Nan`). */
function parseValue (text: string, where: string): number {
  if (/^\+?inf(inity)?$/i.test(text)) return Infinity
  if (/^-inf(inity)?$/i.test(text)) return -Infinity
  if (/^nan$/i.test(text)) return NaN
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text)) throw new Error(`${where}: bad value ${JSON.stringify(text)}`)
  return Number(text)
}

function parseLabels (text: string, where: string): Record<string, string> {
  const labels: Record<string, string> = {}
  let i = 0
  while (i < text.length) {
    const eq = text.indexOf('=', i)
    if (eq === -1) throw new Error(`${where}: label without '='`)
    const name = text.slice(i, eq)
    if (!LABEL_NAME.test(name)) throw new Error(`${where}: bad label name ${JSON.stringify(name)}`)
    if (name in labels) throw new Error(`${where}: label ${name} twice`)
    if (text[eq + 1] !== '"') throw new Error(`${where}: label value not quoted`)
    let value = ''
    let j = eq + 2
    for (;;) {
      if (j >= text.length) throw new Error(`${where}: unterminated label value`)
      const c = text[j]
      if (c === '\\') {
        const next = text[j + 1]
        if (next === 'n') value += '\n'
        else if (next === '\\' || next === '"') value += next
        else throw new Error(`${where}: bad escape \\${next}`)
        j += 2
      } else if (c === '"') {
        j++
        break
      } else {
        value += c
        j++
      }
    }
    labels[name] = value
    if (j === text.length) break
    if (text[j] !== ',') throw new Error(`${where}: expected ',' after label ${name}`)
    i = j + 1
  }
  return labels
}

/** The family a sample name belongs to: itself, or the histogram/summary it is a _bucket/_sum/_count of. */
function familyOf (name: string, families: Map<string, Family>): Family | undefined {
  const own = families.get(name)
  if (own !== undefined) return own
  const m = /^(.*)_(bucket|sum|count)$/.exec(name)
  if (m === null) return undefined
  const base = families.get(m[1])
  if (base === undefined) return undefined
  if (base.type === 'histogram' || (base.type === 'summary' && m[2] !== 'bucket')) return base
  return undefined
}

export function parsePrometheus (text: string): Map<string, Family> {
  if (!text.endsWith('\n')) throw new Error('exposition must end with a newline')
  const families = new Map<string, Family>()
  const seen = new Set<string>()
  const lines = text.split('\n')
  lines.pop()
  lines.forEach((line, index) => {
    const where = `line ${index + 1}`
    if (line.trim() === '') return
    if (line.startsWith('#')) {
      const m = new RegExp(`^# (HELP|TYPE) (${NAME}) ?(.*)$`).exec(line)
      if (m === null) return // a plain comment
      const [, kind, name, rest] = m
      let family = families.get(name)
      if (kind === 'TYPE') {
        if (!TYPES.has(rest)) throw new Error(`${where}: unknown type ${rest}`)
        if (family?.samples.length) throw new Error(`${where}: TYPE of ${name} after its samples`)
        if (family !== undefined && family.type !== 'untyped') throw new Error(`${where}: second TYPE for ${name}`)
        if (family === undefined) { family = { name, type: 'untyped', help: '', samples: [] }; families.set(name, family) }
        family.type = rest as MetricType
      } else {
        if (family === undefined) { family = { name, type: 'untyped', help: '', samples: [] }; families.set(name, family) }
        family.help = rest
      }
      return
    }
    const m = new RegExp(`^(${NAME})(?:\\{(.*)\\})? (\\S+)(?: (-?\\d+))?$`).exec(line)
    if (m === null) throw new Error(`${where}: not a sample: ${JSON.stringify(line)}`)
    const [, name, labelText, valueText] = m
    const labels = labelText === undefined || labelText === '' ? {} : parseLabels(labelText, where)
    const family = familyOf(name, families)
    if (family === undefined) throw new Error(`${where}: sample ${name} before any # TYPE for it`)
    const key = name + JSON.stringify(Object.entries(labels).sort())
    if (seen.has(key)) throw new Error(`${where}: series ${key} twice`)
    seen.add(key)
    if (name.endsWith('_bucket') && family.type === 'histogram' && labels.le === undefined) throw new Error(`${where}: bucket without le`)
    family.samples.push({ name, labels, value: parseValue(valueText, where) })
  })
  for (const family of families.values()) if (family.type === 'histogram') checkHistogram(family)
  return families
}

function checkHistogram (family: Family): void {
  const series = new Map<string, Sample[]>()
  const keyOf = (s: Sample) => JSON.stringify(Object.entries(s.labels).filter(([k]) => k !== 'le').sort())
  for (const s of family.samples) {
    const k = keyOf(s)
    series.set(k, [...(series.get(k) ?? []), s])
  }
  for (const [k, samples] of series) {
    const buckets = samples.filter((s) => s.name === `${family.name}_bucket`)
    const count = samples.find((s) => s.name === `${family.name}_count`)
    if (count === undefined || samples.find((s) => s.name === `${family.name}_sum`) === undefined) throw new Error(`${family.name}${k}: _sum or _count missing`)
    let last = -Infinity
    let previous = 0
    for (const b of buckets) {
      const le = parseValue(b.labels.le, `${family.name} le`)
      if (le <= last) throw new Error(`${family.name}${k}: buckets not in increasing order`)
      if (b.value < previous) throw new Error(`${family.name}${k}: buckets not cumulative`)
      last = le
      previous = b.value
    }
    if (last !== Infinity) throw new Error(`${family.name}${k}: no +Inf bucket`)
    if (previous !== count.value) throw new Error(`${family.name}${k}: +Inf bucket ${previous} != _count ${count.value}`)
  }
}

/** The value of one series (labels must match exactly those given, other labels ignored); undefined when absent. */
export function sampleValue (families: Map<string, Family>, name: string, labels: Record<string, string> = {}): number | undefined {
  const family = familyOf(name, families)
  const hit = family?.samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
  return hit?.value
}
