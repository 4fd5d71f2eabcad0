// Insights of the selected session (GET …/insights and …/insights/contacts): the figures that outlive the
// 24 hours. Read when the panel is opened, and again on Refresh or a new period, type or audience (never on
// every live event: the API's rate limit is per client); times by hour and day are in the browser's zone.
/* global ResizeObserver */
import { isMissingRoute } from './api.js'
import { barChart, rateChart } from './charts.js'
import { h, setText, show, phone, formatDateTime, formatDuration, plural } from './dom.js'

const $ = (id) => document.getElementById(id)
const DAY_MS = 86_400_000
/** statuses read for the rate chart (the API's page limit) */
const STATUS_LIMIT = 500
const TOP = 10
/** contacts read for the never-view list */
const NEVER = 100
const TYPE_LABELS = { text: 'Text', image: 'Image', video: 'Video', audio: 'Audio', url: 'URL' }
const KIND_LABELS = { numbers: 'Numbers', list: 'List', contacts: 'My contacts except…', phone: "As the phone's privacy", saved: 'Saved audience' }

/** the browser's IANA zone (UTC where it names none) */
export const browserZone = () => Intl.DateTimeFormat().resolvedOptions().timeZone ?? 'UTC'

/** 0.456 → "46%"; null (nothing delivered) → "–" */
export const percent = (rate) => rate === null || rate === undefined ? '–' : `${Math.round(rate * 100)}%`

/** a duration in ms as the dashboard writes them ("45 s", "3 min", "1 h 5 min"); null → "–" */
export const duration = (ms) => ms === null || ms === undefined ? '–' : formatDuration(ms / 1000)

/** a recipient line: "+number", or the LID as stored when no number is known */
const who = (c) => c.number.endsWith('@lid') ? c.number : phone(c.number)

const audienceLabel = (a) => a.kind === 'saved' ? `Saved: ${a.name ?? a.audienceId ?? 'removed audience'}` : KIND_LABELS[a.kind] ?? a.kind

/** view rate as a bar and its figure, for a table cell */
function rateCell (rate) {
  const bar = h('span', { class: 'reach-bar', 'aria-hidden': 'true' }, h('span', { class: 'reach-fill' }))
  bar.firstChild.style.width = `${Math.round((rate ?? 0) * 100)}%`
  return h('td', { class: 'rate-cell', dataset: { rate: rate === null ? '' : String(Math.round(rate * 100)) } }, h('span', { class: 'rate-box' }, bar, h('span', { text: percent(rate) })))
}

/** day names Monday … Sunday in the page's language */
const WEEKDAYS = Array.from({ length: 7 }, (_, i) => new Intl.DateTimeFormat(undefined, { weekday: 'short', timeZone: 'UTC' }).format(new Date(Date.UTC(2024, 0, 1 + i))))
const shortDate = new Intl.DateTimeFormat(undefined, { day: 'numeric', month: 'short' })
const hour = (i) => `${String(i).padStart(2, '0')}:00`

/**
 * @param {{ api: any, describe: (err: unknown) => string, busy: (button: HTMLElement, work: () => Promise<unknown>) => Promise<unknown>,
 *           toast: (message: string) => void }} deps
 */
export function createInsightsPanel ({ api, describe, busy, toast }) {
  const details = $('insights-details')
  let sessionId = null
  /** the panel's figures were read (or are being read) for the session */
  let requested = false
  /** the last answers, drawn again when the width changes */
  let last = null
  /** bumped by every read: an older answer arriving late is dropped */
  let generation = 0
  /** saved audiences seen in answers (id → name), offered in the audience filter */
  const savedSeen = new Map()
  const zone = browserZone()
  setText($('insights-tz'), zone)

  function query () {
    const to = Date.now()
    const days = Number($('insights-range').value)
    return { from: new Date(to - days * DAY_MS).toISOString(), to: new Date(to).toISOString() }
  }

  async function load () {
    const id = sessionId
    if (id === null) return
    requested = true
    const mine = ++generation
    const range = query()
    setText($('insights-status'), 'Reading…')
    setText($('insights-error'), '')
    try {
      const [insights, top, never] = await Promise.all([
        api.insights(id, { ...range, tz: zone, type: $('insights-type').value, audience: $('insights-audience').value, limit: STATUS_LIMIT }),
        api.insightContacts(id, { ...range, sort: 'viewed', order: 'desc', limit: TOP }),
        api.insightContacts(id, { ...range, sort: 'viewed', order: 'asc', limit: NEVER })
      ])
      if (mine !== generation || id !== sessionId) return
      show($('insights-missing'), false)
      const nobody = never.items.filter((c) => c.viewed === 0)
      // a full page of contacts who never viewed: there may be more of them
      const neverMore = never.nextCursor !== null && nobody.length === never.items.length
      last = { insights, top: top.items.filter((c) => c.viewed > 0), never: nobody, neverMore }
      rememberSaved(insights.byAudience)
      render()
      setText($('insights-status'), `Read at ${formatDateTime(new Date().toISOString())}; Refresh to read again.`)
    } catch (err) {
      if (mine !== generation || id !== sessionId) return
      setText($('insights-status'), '')
      if (isMissingRoute(err)) { show($('insights-missing'), true); show($('insights-results'), false); return }
      setText($('insights-error'), describe(err))
    }
  }

  function rememberSaved (byAudience) {
    const select = $('insights-audience')
    for (const a of byAudience) {
      if (a.kind !== 'saved' || a.audienceId === null || savedSeen.has(a.audienceId)) continue
      savedSeen.set(a.audienceId, a.name)
      select.append(h('option', { value: a.audienceId, text: `Saved: ${a.name ?? a.audienceId}` }))
    }
  }

  function render () {
    if (last === null) return
    const { insights: d } = last
    const t = d.totals
    const any = t.statuses > 0
    show($('insights-empty'), !any)
    show($('insights-results'), any)
    if (!any) return
    setText($('ins-statuses'), String(t.statuses))
    setText($('ins-statuses-sub'), `${plural(t.recipients, 'recipient')} · ${t.delivered} delivered`)
    setText($('ins-rate'), percent(t.viewRate))
    setText($('ins-rate-sub'), `${t.viewed} viewed of ${t.delivered} delivered`)
    setText($('ins-ttv'), duration(t.timeToView.p50Ms))
    setText($('ins-ttv-sub'), t.timeToView.p90Ms === null ? 'no views yet' : `median · 90% within ${duration(t.timeToView.p90Ms)}`)
    setText($('ins-reacted'), String(t.reacted))
    setText($('ins-replied'), String(t.replied))
    drawCharts()
    renderSplits(d)
    renderContacts()
  }

  /** the charts at their figures' current width (called again when it changes) */
  function drawCharts () {
    if (last === null || $('insights-results').hidden) return
    const d = last.insights
    const width = (id) => Math.max(260, Math.floor($(id).clientWidth))

    const from = Date.parse(d.from)
    const to = Date.parse(d.to)
    const rated = d.statuses.filter((s) => s.viewRate !== null)
    const points = rated.map((s) => ({
      id: String(s.statusId),
      at: Date.parse(s.postedAt),
      rate: s.viewRate,
      tip: `${TYPE_LABELS[s.type] ?? s.type} status #${s.statusId}, ${formatDateTime(s.postedAt)}: ${percent(s.viewRate)} (${s.viewed} of ${s.delivered} delivered)${s.live ? ', live' : ''}`
    }))
    const avg = d.totals.viewRate === null ? '' : `, ${percent(d.totals.viewRate)} over all`
    $('ins-rate-chart').replaceChildren(rateChart({
      points,
      from,
      to,
      width: width('ins-rate-chart'),
      name: `View rate of ${plural(points.length, 'status', 'statuses')}${avg}`,
      timeLabel: (ms) => shortDate.format(new Date(ms))
    }))
    const notes = []
    if (d.statuses.length < d.totals.statuses) notes.push(`The newest ${d.statuses.length} of ${d.totals.statuses} statuses are drawn.`)
    const unrated = d.statuses.length - rated.length
    if (unrated > 0) notes.push(`${plural(unrated, 'status', 'statuses')} reached nobody yet and ${unrated === 1 ? 'has' : 'have'} no rate.`)
    setText($('ins-rate-note'), notes.join(' '))

    const hours = d.viewsByHour
    const peak = hours.indexOf(Math.max(...hours))
    const total = hours.reduce((a, b) => a + b, 0)
    const narrow = width('ins-hours-chart') < 420
    $('ins-hours-chart').replaceChildren(barChart({
      values: hours,
      width: width('ins-hours-chart'),
      name: total === 0 ? 'No views by hour yet' : `${plural(total, 'view')} by hour of day; most at ${hour(peak)}–${String(peak).padStart(2, '0')}:59 (${hours[peak]})`,
      label: (i) => String(i),
      labelled: (i) => i % (narrow ? 6 : 3) === 0,
      tip: (i, v) => `${hour(i)}–${String(i).padStart(2, '0')}:59: ${plural(v, 'view')}`
    }))
    const days = d.viewsByWeekday
    $('ins-weekdays-chart').replaceChildren(barChart({
      values: days,
      width: width('ins-weekdays-chart'),
      name: `${plural(days.reduce((a, b) => a + b, 0), 'view')} by day of the week`,
      label: (i) => WEEKDAYS[i],
      labelled: () => true,
      tip: (i, v) => `${WEEKDAYS[i]}: ${plural(v, 'view')}`
    }))
  }

  function renderSplits (d) {
    $('ins-by-type').tBodies[0].replaceChildren(...d.byType.map((r) => h('tr', { dataset: { type: r.type } },
      h('th', { scope: 'row', text: TYPE_LABELS[r.type] ?? r.type }),
      h('td', { text: String(r.statuses) }),
      h('td', { text: `${r.viewed} of ${r.delivered}` }),
      rateCell(r.viewRate))))
    $('ins-by-audience').tBodies[0].replaceChildren(...d.byAudience.map((r) => h('tr', { dataset: { kind: r.kind, audienceId: r.audienceId ?? '' } },
      h('th', { scope: 'row', text: audienceLabel(r) }),
      h('td', { text: String(r.statuses) }),
      h('td', { text: `${r.viewed} of ${r.delivered}` }),
      rateCell(r.viewRate))))
  }

  function contactCell (c) {
    return h('th', { scope: 'row', class: 'contact-cell' },
      c.name === null ? null : h('span', { class: 'contact-name', text: c.name }),
      h('span', { class: 'contact-number', text: who(c) }))
  }

  function renderContacts () {
    const { top, never, neverMore } = last
    $('ins-top').tBodies[0].replaceChildren(...top.map((c) => h('tr', { dataset: { number: c.number } },
      contactCell(c),
      h('td', { text: `${c.viewed} of ${c.received}` }),
      rateCell(c.viewRate),
      h('td', { text: duration(c.medianViewMs) }))))
    show($('ins-top').parentElement, top.length > 0)
    show($('ins-top-empty'), top.length === 0)
    $('ins-never').tBodies[0].replaceChildren(...never.map((c) => h('tr', { dataset: { number: c.number } },
      contactCell(c),
      h('td', { text: plural(c.received, 'status', 'statuses') }))))
    show($('ins-never').parentElement, never.length > 0)
    show($('ins-never-empty'), never.length === 0)
    setText($('ins-never-title'), never.length === 0 ? 'Never view' : `Never view (${neverMore ? `${never.length}+` : never.length})`)
  }

  async function downloadCsv (button) {
    const id = sessionId
    if (id === null) return
    await busy(button, async () => {
      try {
        const blob = await api.insightContactsCsv(id, query())
        const url = URL.createObjectURL(blob)
        const a = h('a', { href: url, download: `insights-${id}-contacts.csv`, hidden: true })
        document.body.append(a)
        a.click()
        a.remove()
        setTimeout(() => { URL.revokeObjectURL(url) }, 10_000)
      } catch (err) { toast(describe(err)) }
    })
  }

  function clear () {
    generation++
    last = null
    requested = false
    show($('insights-results'), false)
    show($('insights-empty'), false)
    setText($('insights-error'), '')
    setText($('insights-status'), '')
  }

  // a new width (a phone turned, the window resized): the charts again, from what was read
  let drawnWidth = 0
  new ResizeObserver(() => {
    const w = $('ins-rate-chart').clientWidth
    if (Math.abs(w - drawnWidth) < 8) return
    drawnWidth = w
    drawCharts()
  }).observe($('ins-rate-chart'))

  $('insights-refresh').addEventListener('click', (e) => { void busy(e.currentTarget, load) })
  for (const id of ['insights-range', 'insights-type', 'insights-audience']) $(id).addEventListener('change', () => { void load() })
  $('insights-csv').addEventListener('click', (e) => { void downloadCsv(e.currentTarget) })
  details.addEventListener('toggle', () => { if (details.open && !requested) void load() })

  return {
    /** the selected session (null: none); its figures are read when the panel is open */
    setSession (id) {
      if (id === sessionId) return
      clear()
      sessionId = id
      for (const value of savedSeen.keys()) $('insights-audience').querySelector(`option[value="${window.CSS.escape(value)}"]`)?.remove()
      savedSeen.clear()
      if (id !== null && details.open) void load()
    },
    /** a statuses-updated event: the retention cleanup removed figures this panel shows */
    onEvent (e) {
      if (e.sessionId === sessionId && e.action === 'insights-cleanup' && requested && details.open) void load()
    },
    reset () {
      clear()
      sessionId = null
    }
  }
}
