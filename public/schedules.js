// Scheduled statuses of the selected session: the When part of the post form (now, or later: once or
// repeating) and the list of schedules with their runs, kept current by the scheduled-status-fired and
// scheduled-status-failed events. A schedule posts the body the post form describes (audience included).
import { h, setText, show, formatDateTime, formatWhen, plural, showFieldError } from './dom.js'

const $ = (id) => document.getElementById(id)
const WEEKDAYS = [['mon', 'Mon'], ['tue', 'Tue'], ['wed', 'Wed'], ['thu', 'Thu'], ['fri', 'Fri'], ['sat', 'Sat'], ['sun', 'Sun']]
const UNIT_ONE = { seconds: 'second', minutes: 'minute', hours: 'hour', days: 'day', weeks: 'week' }
const STATE_LABELS = { active: 'Active', paused: 'Paused', done: 'Done' }
/** a schedule's state shown with the session colours: active green, paused amber, done grey */
const STATE_COLOURS = { active: 'open', paused: 'connecting', done: 'close' }
const RUN_LABELS = { firing: 'Firing…', fired: 'Fired', failed: 'Failed', missed: 'Missed' }
/** runs listed per schedule, newest first */
const RUNS_SHOWN = 5

const pad = (n) => String(n).padStart(2, '0')

/** A datetime-local value ("2026-05-01T09:00", seconds optional), read in the browser's zone, as ISO 8601 with that zone's offset. */
export function localToIso (value) {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/.test(value)) return null
  const d = new Date(value)
  if (Number.isNaN(d.getTime())) return null
  const offset = -d.getTimezoneOffset()
  const abs = Math.abs(offset)
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}` +
    `${offset >= 0 ? '+' : '-'}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`
}

/** A Date as a datetime-local value (to the minute). */
function localInput (d) {
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`
}

/** "Every 2 days at 09:00 on Mon, Fri (Europe/Berlin), from …" */
export function ruleText (s) {
  const r = s.repeat
  if (r === null || r === undefined) return `Once, ${formatDateTime(s.at)}`
  let text = `Every ${r.every === 1 ? UNIT_ONE[r.unit] ?? r.unit : `${r.every} ${r.unit}`}`
  if (r.timeOfDay) text += ` at ${r.timeOfDay}`
  if (r.weekdays?.length) text += ` on ${r.weekdays.map((d) => WEEKDAYS.find(([v]) => v === d)?.[1] ?? d).join(', ')}`
  if (r.timeZone) text += ` (${r.timeZone})`
  text += `, from ${formatDateTime(s.at)}`
  if (r.until) text += ` until ${formatDateTime(r.until)}`
  if (r.count) text += `, at most ${plural(r.count, 'run')}`
  return text
}

/**
 * @param {{ api: any, describe: (err: unknown) => string, busy: (button: HTMLElement, work: () => Promise<unknown>) => Promise<unknown>,
 *           confirmAction: (o: { title: string, text: string, ok: string }) => Promise<boolean>, toast: (message: string) => void,
 *           summarize: (body: any) => string, audienceText: (body: any) => string, audienceError: HTMLElement }} deps
 *   `summarize`: a send-status body in a few words; `audienceText`: whom it goes to; `audienceError`: where errors about the audience go
 */
export function createSchedules ({ api, describe, busy, confirmAction, toast, summarize, audienceText, audienceError }) {
  const form = $('post-form')
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone ?? ''
  let sessionId = null
  /** id → schedule (GET …/scheduled-statuses shape) */
  const schedules = new Map()
  /** id → card { el, update, say } */
  const cards = new Map()

  // the When part of the post form -------------------------------------------------------------------

  $('sched-weekdays').append(...WEEKDAYS.map(([value, label]) => h('label', { class: 'radio' },
    h('input', { type: 'checkbox', name: 'weekdays', value }), ` ${label}`)))

  const isLater = () => form.elements.when.value === 'later'
  const unit = () => $('sched-repeat').value

  function syncWhen () {
    const later = isLater()
    show($('schedule-fields'), later)
    setText($('post-submit'), later ? 'Schedule status' : 'Post status')
    if (later && $('sched-at').value === '') {
      // the next full hour
      const d = new Date(Date.now() + 3_600_000)
      d.setMinutes(0, 0, 0)
      $('sched-at').value = localInput(d)
    }
  }
  function syncRepeat () {
    const u = unit()
    show($('sched-every-field'), u !== '')
    show($('sched-repeat-fields'), u !== '')
    show($('sched-day-fields'), u === 'days' || u === 'weeks')
    setText($('sched-weekdays-hint'), u === 'weeks' ? 'The days of each week; none ticked: the day of the first run.' : 'Only on these days; none ticked: every day.')
    if ($('sched-zone').value === '') $('sched-zone').value = zone
  }
  function syncEnds () {
    const ends = form.elements.ends.value
    show($('sched-until-field'), ends === 'until')
    show($('sched-count-field'), ends === 'count')
  }
  for (const r of form.querySelectorAll('input[name="when"]')) r.addEventListener('change', syncWhen)
  for (const r of form.querySelectorAll('input[name="ends"]')) r.addEventListener('change', syncEnds)
  $('sched-repeat').addEventListener('change', syncRepeat)
  const offset = -new Date().getTimezoneOffset()
  setText($('sched-at-hint'), `In your time zone${zone === '' ? '' : `, ${zone}`} (UTC${offset >= 0 ? '+' : '-'}${pad(Math.floor(Math.abs(offset) / 60))}:${pad(Math.abs(offset) % 60)} now).`)
  syncWhen()
  syncRepeat()
  syncEnds()

  const ERROR_IDS = ['sched-at-error', 'sched-repeat-error', 'sched-every-error', 'sched-until-error', 'sched-count-error', 'sched-time-error', 'sched-zone-error', 'sched-weekdays-error']
  /** where an API error naming a field goes (dom.js showFieldError) */
  const errorFields = () => [
    ['body.at', $('sched-at-error')], ['body.repeat', $('sched-repeat-error')], ['body.repeat.every', $('sched-every-error')],
    ['body.repeat.unit', $('sched-every-error')], ['body.repeat.until', $('sched-until-error')], ['body.repeat.count', $('sched-count-error')],
    ['body.repeat.timeOfDay', $('sched-time-error')], ['body.repeat.weekdays', $('sched-weekdays-error')], ['body.repeat.timeZone', $('sched-zone-error')],
    ['body.status.targetNumbers', audienceError], ['body.status.audience', audienceError]
  ]
  /** the input next to each error, to focus */
  const FOCUS = { 'sched-at-error': 'sched-at', 'sched-repeat-error': 'sched-repeat', 'sched-every-error': 'sched-every', 'sched-until-error': 'sched-until', 'sched-count-error': 'sched-count', 'sched-time-error': 'sched-time', 'sched-zone-error': 'sched-zone' }

  function fail (errorId, message, inputId) {
    setText($(errorId), message)
    return { error: message, focus: $(inputId) }
  }

  const intIn = (value, min, max) => { const n = Number(value); return Number.isInteger(n) && n >= min && n <= max ? n : null }

  /** the schedule fields as { at, repeat? }, or { error, focus } with the error shown next to its field */
  function readWhen () {
    const at = localToIso($('sched-at').value)
    if (at === null) return fail('sched-at-error', 'Choose the date and time of the first run.', 'sched-at')
    const u = unit()
    if (u === '') return { at }
    const every = intIn($('sched-every').value, 1, 10_000)
    if (every === null) return fail('sched-every-error', 'Repeat every 1 to 10,000 units (a whole number).', 'sched-every')
    const repeat = { every, unit: u }
    const ends = form.elements.ends.value
    if (ends === 'until') {
      const until = localToIso($('sched-until').value)
      if (until === null) return fail('sched-until-error', 'Choose the date and time after which no run fires.', 'sched-until')
      repeat.until = until
    } else if (ends === 'count') {
      const count = intIn($('sched-count').value, 1, 100_000)
      if (count === null) return fail('sched-count-error', 'Enter a whole number of runs from 1 to 100,000.', 'sched-count')
      repeat.count = count
    }
    if (u === 'days' || u === 'weeks') {
      const time = $('sched-time').value
      if (time !== '') repeat.timeOfDay = time.slice(0, 5)
      const days = [...$('sched-weekdays').querySelectorAll('input:checked')].map((i) => i.value)
      if (days.length > 0) repeat.weekdays = days
      const tz = $('sched-zone').value.trim()
      if (tz !== '') repeat.timeZone = tz
    }
    return { at, repeat }
  }

  // the list -----------------------------------------------------------------------------------------

  async function load () {
    const id = sessionId
    if (id === null) return
    try {
      const list = await api.schedules(id)
      if (id !== sessionId) return
      setText($('schedules-error'), '')
      schedules.clear()
      for (const s of list) schedules.set(s.id, s)
      render()
    } catch (err) {
      if (id === sessionId) setText($('schedules-error'), describe(err))
    }
  }

  async function refreshOne (scheduleId) {
    const id = sessionId
    try {
      const s = await api.schedule(id, scheduleId)
      if (id !== sessionId) return
      schedules.set(s.id, s)
      render()
    } catch {
      // gone, or not readable now: the whole list says which
      await load()
    }
  }

  /** active and paused ones first, newest first within each */
  function ordered () {
    const rank = (s) => s.state === 'done' ? 1 : 0
    return [...schedules.values()].sort((a, b) => rank(a) - rank(b) || b.createdAt.localeCompare(a.createdAt) || b.id.localeCompare(a.id))
  }

  function render () {
    const list = $('schedule-list')
    for (const [id, card] of cards) if (!schedules.has(id)) { card.el.remove(); cards.delete(id) }
    ordered().forEach((s, i) => {
      let card = cards.get(s.id)
      if (card === undefined) { card = scheduleCard(s.id); cards.set(s.id, card) }
      card.update(s)
      // move only what is out of place: moving a node that holds focus would drop it
      if (list.children[i] !== card.el) list.insertBefore(card.el, list.children[i] ?? null)
    })
    show($('schedules-empty'), schedules.size === 0)
  }

  function runRow (r) {
    const state = h('span', { class: 'delivery-state', dataset: { status: r.state === 'fired' ? 'succeeded' : r.state === 'firing' ? 'pending' : 'failed' }, text: RUN_LABELS[r.state] ?? r.state })
    return h('tr', { class: 'run', dataset: { state: r.state, statusId: r.statusId ?? '' } },
      h('td', {}, h('time', { datetime: r.at, title: formatDateTime(r.at), text: formatWhen(r.at) })),
      h('td', {}, r.firedAt === null ? '–' : h('time', { datetime: r.firedAt, title: formatDateTime(r.firedAt), text: formatWhen(r.firedAt) })),
      h('td', { class: 'run-status', text: r.statusId === null ? '–' : `#${r.statusId}` }),
      h('td', {}, state, r.late ? h('span', { class: 'tag', title: 'Fired more than 5 seconds after its time', text: 'late' }) : null,
        r.error ? h('span', { class: 'run-error', text: r.error }) : null))
  }

  function scheduleCard (scheduleId) {
    const title = h('strong', { class: 'schedule-summary' })
    const badge = h('span', { class: 'badge' })
    const rule = h('p', { class: 'session-meta schedule-rule' })
    const next = h('p', { class: 'session-meta schedule-next' })
    const runsTitle = h('p', { class: 'runs-title' })
    const rows = h('tbody')
    const table = h('table', { class: 'viewers deliveries runs' },
      h('thead', {}, h('tr', {}, ...['Due', 'Fired', 'Status', 'State'].map((t) => h('th', { scope: 'col', text: t })))), rows)
    const earlier = h('p', { class: 'hint' })
    const toggleBtn = h('button', { type: 'button', class: 'button-quiet', onclick: () => { void toggle() } })
    const deleteBtn = h('button', { type: 'button', class: 'button-danger-quiet', text: 'Delete', onclick: () => { void remove() } })
    const message = h('p', { class: 'card-message', role: 'status' })
    const el = h('li', { class: 'session-card schedule-card', dataset: { scheduleId } },
      h('div', { class: 'session-head' }, title, badge), rule, next, runsTitle, h('div', { class: 'deliveries-box' }, table), earlier,
      h('div', { class: 'session-actions' }, toggleBtn, deleteBtn), message)

    function update (s) {
      el.dataset.state = STATE_COLOURS[s.state] ?? 'close'
      el.dataset.schedule = s.state
      setText(title, summarize(s.status))
      setText(badge, STATE_LABELS[s.state] ?? s.state)
      badge.dataset.state = el.dataset.state
      setText(rule, `${ruleText(s)} · ${audienceText(s.status)}`)
      const nextText = s.state === 'done' || s.nextRunAt === null ? 'No run left.'
        : s.state === 'paused' ? `Paused: no run fires until it is resumed (next due ${formatDateTime(s.nextRunAt)}).`
          : `Next run ${formatDateTime(s.nextRunAt)}${s.deferredUntil ? `, held back by the daily limits until ${formatDateTime(s.deferredUntil)}` : ''}.`
      setText(next, nextText)
      const runs = [...s.runs].reverse()
      setText(runsTitle, runs.length === 0 ? 'No runs yet.' : `Runs (${s.runCount ?? runs.length})`)
      rows.replaceChildren(...runs.slice(0, RUNS_SHOWN).map(runRow))
      show(table, runs.length > 0)
      setText(earlier, runs.length > RUNS_SHOWN ? `and ${plural(runs.length - RUNS_SHOWN, 'earlier run')}` : '')
      show(earlier, runs.length > RUNS_SHOWN)
      show(toggleBtn, s.state !== 'done')
      setText(toggleBtn, s.state === 'paused' ? 'Resume' : 'Pause')
      toggleBtn.setAttribute('aria-label', `${s.state === 'paused' ? 'Resume' : 'Pause'} the schedule: ${summarize(s.status)}`)
      deleteBtn.setAttribute('aria-label', `Delete the schedule: ${summarize(s.status)}`)
    }

    async function toggle () {
      const s = schedules.get(scheduleId)
      if (s === undefined) return
      const resume = s.state === 'paused'
      await busy(toggleBtn, async () => {
        try {
          const updated = resume ? await api.resumeSchedule(sessionId, scheduleId) : await api.pauseSchedule(sessionId, scheduleId)
          schedules.set(scheduleId, updated)
          render()
          setText(message, resume ? 'Resumed: runs due while it was paused are skipped.' : 'Paused.')
        } catch (err) { setText(message, describe(err)) }
      })
    }

    async function remove () {
      const ok = await confirmAction({ title: 'Delete this schedule?', text: 'No further run fires, and its run records are removed. Statuses it already posted stay.', ok: 'Delete' })
      if (!ok) { deleteBtn.focus(); return }
      await busy(deleteBtn, async () => {
        try {
          await api.deleteSchedule(sessionId, scheduleId)
          schedules.delete(scheduleId)
          render()
          toast('Schedule deleted.')
          $('schedules-title').focus()
        } catch (err) { setText(message, describe(err)) }
      })
    }

    return { el, update, say: (text) => { setText(message, text) } }
  }

  $('schedules-refresh').addEventListener('click', (e) => { void busy(e.currentTarget, load) })

  return {
    isLater,
    readWhen,
    clearErrors () { for (const id of ERROR_IDS) setText($(id), '') },
    /** creates the schedule for a send-status body; rejects with the API's error */
    async create (id, status, when) {
      const created = await api.createSchedule(id, { status, ...when })
      if (id === sessionId) await load()
      return created
    },
    /** shows a failed create next to the field it names; returns the input to focus, or null */
    showError (message, fallback) {
      const el = showFieldError(message, errorFields(), fallback)
      const input = FOCUS[el.id]
      return input === undefined ? null : $(input)
    },
    /** scheduled-status-fired / scheduled-status-failed */
    onRun (e) {
      if (e.sessionId !== sessionId) return
      const card = cards.get(e.scheduleId)
      card?.say(e.statusId !== undefined && e.state === undefined
        ? `The run due ${formatWhen(e.at)} fired${e.late ? ' late' : ''}: status #${e.statusId}.`
        : `The run due ${formatWhen(e.at)} ${e.state === 'missed' ? 'was missed' : 'failed'}: ${e.error}`)
      void refreshOne(e.scheduleId)
    },
    load,
    setSession (id) {
      if (id === sessionId) return
      sessionId = id
      schedules.clear()
      render()
      setText($('schedules-error'), '')
      if (id !== null) void load()
    },
    reset () {
      sessionId = null
      schedules.clear()
      render()
    }
  }
}
