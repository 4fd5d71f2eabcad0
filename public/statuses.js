// The selected session's sent statuses: the list (live counts) and the status dialog (viewers, reactions,
// replies, delete and revoke).
/* global requestAnimationFrame */
import { $, TYPE_LABELS, state, api, describe, toast, busy, confirmAction } from './page.js'
import { h, setText, show, phone, formatDateTime, formatWhen, formatAgo, plural } from './dom.js'
import { renderAnswers, renderReachLine, viewsChart } from './reach.js'
import { recipientList, snapshotText } from './picker.js'
import { scheduleStats, scheduleOverview } from './overview.js'

export async function loadStatuses () {
  const sessionId = state.selectedId
  if (sessionId === null) return
  try {
    const list = await api.sentStatuses(sessionId)
    if (sessionId !== state.selectedId) return
    setText($('statuses-error'), '')
    state.statuses = new Map(list.map((s) => [String(s.id), s]))
    renderStatuses()
  } catch (err) {
    if (sessionId === state.selectedId) setText($('statuses-error'), describe(err))
  }
}

/** statusId → list item */
const statusItems = new Map()

function renderStatuses () {
  const list = $('status-list')
  for (const [id, item] of statusItems) if (!state.statuses.has(id)) { item.remove(); statusItems.delete(id) }
  const ordered = [...state.statuses.values()].sort((a, b) => b.timestamp.localeCompare(a.timestamp) || Number(b.id) - Number(a.id))
  ordered.forEach((s, i) => {
    const item = renderStatus(s)
    if (list.children[i] !== item) list.insertBefore(item, list.children[i] ?? null)
  })
  show($('statuses-empty'), ordered.length === 0)
  if (state.openStatusId !== null) {
    const open = state.statuses.get(state.openStatusId)
    if (open === undefined) $('status-dialog').close()
    else renderStatusFacts(open)
  }
}

export function statusSummary (s) {
  if (s.type === 'text') return s.content
  if (s.caption) return s.caption
  if (s.type === 'url') return s.content
  return s.content.replace(/^[0-9]+-[0-9a-f]{12}-/, '')
}

/** Builds or updates the list item of one status. */
export function renderStatus (s) {
  const id = String(s.id)
  let item = statusItems.get(id)
  if (item === undefined) {
    item = h('li', { class: 'status-item', dataset: { statusId: id } },
      h('button', { type: 'button', class: 'status-open', onclick: () => { void openStatus(id) } },
        h('span', { class: 'status-type' }),
        h('span', { class: 'status-summary' }),
        h('span', { class: 'status-meta' }),
        h('span', { class: 'status-reach' })),
      h('span', { class: 'viewer-count' }))
    statusItems.set(id, item)
  }
  const [open, count] = item.children
  const [type, summary, meta, reach] = open.children
  renderReachLine(reach, s)
  setText(type, TYPE_LABELS[s.type] ?? s.type)
  type.dataset.type = s.type
  setText(summary, statusSummary(s))
  const delivery = s.state === 'partial' ? ` · partial: reached ${s.sentCount}` : s.state === 'sending' ? ` · sending (${s.sentCount} so far)` : ''
  setText(meta, `${formatWhen(s.timestamp)} · to ${plural(s.contactCount, 'contact')}${delivery}${s.error && s.state !== 'partial' ? ' · failed' : ''}`)
  item.classList.toggle('status-failed', Boolean(s.error))
  setText(count, plural(s.viewerCount ?? 0, 'viewer'))
  count.dataset.count = String(s.viewerCount ?? 0)
  open.setAttribute('aria-label', `${TYPE_LABELS[s.type] ?? s.type} status: ${statusSummary(s)}. ${plural(s.viewerCount ?? 0, 'viewer')}. Open details`)
  return item
}

export function removeStatus (id) {
  state.statuses.delete(id)
  renderStatuses()
}

$('statuses-refresh').addEventListener('click', (e) => { void busy(e.currentTarget, loadStatuses) })

// status dialog ------------------------------------------------------------------------------------

async function openStatus (id) {
  const s = state.statuses.get(id)
  const sessionId = state.selectedId
  if (s === undefined || sessionId === null) return
  state.openStatusId = id
  state.viewers = []
  state.answers = { reactions: [], replies: [] }
  renderStatusFacts(s)
  renderChart()
  renderAnswerLists()
  setText($('answers-error'), '')
  setText($('viewers-error'), '')
  setText($('status-dialog-error'), '')
  $('viewers-body').replaceChildren()
  show($('viewers-table'), false)
  show($('viewers-empty'), false)
  setText($('viewers-title'), 'Viewers')
  const dialog = $('status-dialog')
  if (!dialog.open) dialog.showModal()
  try {
    const viewers = await api.viewers(sessionId, id)
    // live events may have come in meanwhile: what they brought is newer
    if (state.openStatusId === id) state.viewers = mergeViewers(viewers, state.viewers)
    renderViewers()
  } catch (err) {
    setText($('viewers-error'), describe(err))
  }
  try {
    const [reactions, replies] = await Promise.all([api.reactions(sessionId, id), api.replies(sessionId, id)])
    if (state.openStatusId !== id) return
    // events that came in meanwhile are in the lists already, or in these answers
    state.answers = {
      reactions: reactions.concat(state.answers.reactions.filter((r) => !reactions.some((x) => x.jid === r.jid))),
      replies: replies.concat(state.answers.replies.filter((r) => !replies.some((x) => x.messageId === r.messageId)))
    }
    renderAnswerLists()
  } catch (err) {
    setText($('answers-error'), describe(err))
  }
}

function renderChart () {
  const s = state.openStatusId === null ? undefined : state.statuses.get(state.openStatusId)
  if (s !== undefined) $('views-chart').replaceChildren(viewsChart(s.timestamp, state.viewers))
}

function renderAnswerLists () {
  renderAnswers(state.answers, {
    reactions: $('reactions-list'),
    reactionsTitle: $('reactions-title'),
    reactionsEmpty: $('reactions-empty'),
    replies: $('replies-list'),
    repliesTitle: $('replies-title'),
    repliesEmpty: $('replies-empty')
  })
}

/** A status-reaction / status-reply event: counts on the list item, the open dialog's list. */
export function onAnswer (e, which, apply) {
  scheduleStats()
  if (e.sessionId !== state.selectedId) return
  const id = String(e.statusId)
  if (state.openStatusId === id) {
    state.answers[which] = apply(state.answers[which])
    renderAnswerLists()
  }
  const status = state.statuses.get(id)
  if (status === undefined) return
  if (which === 'replies') {
    // every status-reply event is a new reply
    status.replyCount = (status.replyCount ?? 0) + 1
    renderStatus(status)
  } else {
    // a reaction event may add, change or take back one: the count is read again (one read per burst)
    scheduleStatusReload()
  }
}

let statusReloadTimer = 0
function scheduleStatusReload () {
  if (statusReloadTimer !== 0) return
  statusReloadTimer = window.setTimeout(() => { statusReloadTimer = 0; void loadStatuses() }, 1000)
}

function renderStatusFacts (s) {
  setText($('status-dialog-title'), `${TYPE_LABELS[s.type] ?? s.type} status #${s.id}`)
  const facts = [
    ['Sent', `${formatDateTime(s.timestamp)} (${formatAgo(s.timestamp)})`],
    [s.type === 'text' ? 'Text' : s.type === 'url' ? 'URL' : 'File', s.content]
  ]
  if (s.caption) facts.push(['Caption', s.caption])
  // an audience (send-status `audience`) keeps who it chose; targetNumbers is empty then
  const named = s.audience ? s.audience.recipients : s.targetNumbers ? s.targetNumbers.split(',') : []
  if (s.audience) facts.push(['Audience', snapshotText(s.audience)])
  facts.push(['Recipients', named.length > 0 ? `${plural(s.contactCount, 'contact')}: ${recipientList(named)}` : plural(s.contactCount, 'contact')])
  if (s.state === 'partial') facts.push(['Delivery', `partial: ${s.sentCount} of ${plural(s.contactCount, 'contact')} have it`])
  if (s.error) facts.push([s.state === 'partial' ? 'Why it stopped' : 'Platform error', s.error])
  $('status-facts').replaceChildren(...facts.flatMap(([k, v]) => [h('dt', { text: k }), h('dd', { text: v })]))
}

/** `known` with `added` in: an entry for the same viewer (number, else LID) is replaced */
export function mergeViewers (known, added) {
  const key = (v) => v.number ?? v.jid
  const byKey = new Map(known.map((v) => [key(v), v]))
  for (const v of added) byKey.set(key(v), v)
  return [...byKey.values()]
}

export function renderViewers () {
  const viewers = [...state.viewers].sort((a, b) => a.viewedAt.localeCompare(b.viewedAt))
  const real = viewers.filter((v) => v.isReal).length
  setText($('viewers-title'), `Viewers (${real})`)
  $('viewers-body').replaceChildren(...viewers.map((v) => h('tr', { class: v.isReal ? '' : 'own-view' },
    h('td', {}, v.number === null
      ? h('span', { title: v.jid, text: 'Number not known yet' })
      : phone(v.number), v.isReal ? null : h('span', { class: 'tag', text: 'own device' })),
    h('td', {}, h('time', { datetime: v.viewedAt, title: formatDateTime(v.viewedAt), text: formatWhen(v.viewedAt) })))))
  show($('viewers-table'), viewers.length > 0)
  show($('viewers-empty'), viewers.length === 0)
  renderChart()
}

async function deleteOpenStatus (revoke, button) {
  const id = state.openStatusId
  const sessionId = state.selectedId
  if (id === null || sessionId === null) return
  const dialog = $('status-dialog')
  const ok = await confirmAction({
    title: revoke ? 'Delete and revoke this status?' : 'Delete this status record?',
    text: revoke
      ? 'The record, its viewers and its media are removed here, and the platform is asked to withdraw the status from its recipients.'
      : 'The record, its viewers and its media are removed here. Recipients keep seeing the status until it expires.',
    ok: revoke ? 'Delete and revoke' : 'Delete record'
  })
  if (!ok) { button.focus(); return }
  await busy(button, async () => {
    try {
      const r = await api.deleteStatus(sessionId, id, revoke)
      dialog.close()
      removeStatus(id)
      toast(!revoke ? `${r.message}. Recipients keep seeing it until it expires.`
        : r.deletedFromPlatform ? `${r.message} and revoked for its recipients.`
          : `${r.message}, but the platform did not confirm the revoke.`)
      $('statuses-title').focus()
      scheduleOverview()
    } catch (err) {
      setText($('status-dialog-error'), describe(err))
    }
  })
}

$('status-delete').addEventListener('click', (e) => { void deleteOpenStatus(false, e.currentTarget) })
$('status-revoke').addEventListener('click', (e) => { void deleteOpenStatus(true, e.currentTarget) })
$('status-dialog').addEventListener('close', () => {
  const id = state.openStatusId
  state.openStatusId = null
  state.viewers = []
  // back to the item that opened it
  if (id !== null) {
    requestAnimationFrame(() => {
      const opener = statusItems.get(id)?.querySelector('button')
      if (opener) opener.focus(); else $('statuses-title').focus()
    })
  }
})
for (const btn of document.querySelectorAll('[data-close]')) btn.addEventListener('click', () => { btn.closest('dialog')?.close() })
