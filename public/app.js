// Status Tracker dashboard: plain ES modules, built only on the public REST API and the socket.io channel.
/* global setInterval, requestAnimationFrame */
import { createApi, ApiError } from './api.js'
import { h, setText, show, phone, formatDateTime, formatWhen, formatAgo, formatBytes, formatDuration, plural, PHONE, digitsOf, showFieldError } from './dom.js'
import { createWebhooksPanel } from './webhooks.js'
import { createKeysPanel } from './keys.js'
import { applyReaction, applyReply, renderAnswers, renderReachLine, viewsChart } from './reach.js'
import { createAudiencePicker, recipientList, snapshotText } from './picker.js'
import { createSavedAudiencesPanel } from './audiences.js'
import { createSchedules } from './schedules.js'
import { createContactStatusesPanel } from './contact-statuses.js'
import { createMentionsField } from './mentions.js'
import { createInsightsPanel } from './insights.js'

const KEY_STORAGE = 'statusTracker.apiKey'
const SELECTED_STORAGE = 'statusTracker.selectedSession'
const QR_DATA_URL = /^data:image\/(png|jpeg|gif|webp);base64,[A-Za-z0-9+/=]+$/

const $ = (id) => {
  const el = document.getElementById(id)
  if (el === null) throw new Error(`missing #${id}`)
  return el
}

const STATE_LABELS = { open: 'Connected', connecting: 'Connecting…', close: 'Not connected', 'logged-out': 'Logged out' }
const TYPE_LABELS = { text: 'Text', image: 'Image', video: 'Video', audio: 'Audio', url: 'URL' }

// ---------------------------------------------------------------------------------------------------
// State

let apiKey = sessionStorage.getItem(KEY_STORAGE)
/** @type {any} socket.io client socket */
let socket = null
const state = {
  /** sessionId → session view (GET /api/sessions shape) plus `linkError` */
  sessions: new Map(),
  selectedId: sessionStorage.getItem(SELECTED_STORAGE),
  /** statuses of the selected session, id → status */
  statuses: new Map(),
  /** the status open in the dialog, and its viewers */
  openStatusId: null,
  viewers: [],
  /** reactions and replies of the status open in the dialog */
  answers: { reactions: [], replies: [] },
  /** what the overview last read, and when */
  health: null,
  healthReadAt: 0,
  /** a status send is in flight (status-send-progress events are shown for it) */
  sending: false
}

const api = createApi(() => apiKey, (message) => { lockOut(`The server refused the API key (${message}). Enter the right key.`) })

// ---------------------------------------------------------------------------------------------------
// Small page services: errors, toast, busy buttons, confirmation

function describe (err) {
  return err instanceof ApiError ? err.message : `Unexpected error: ${err instanceof Error ? err.message : String(err)}`
}

let toastTimer = 0
function toast (message) {
  const el = $('toast')
  setText(el, message)
  el.classList.add('toast-visible')
  window.clearTimeout(toastTimer)
  toastTimer = window.setTimeout(() => { el.classList.remove('toast-visible') }, 5000)
}

function banner (message) {
  const el = $('banner')
  setText(el, message ?? '')
  show(el, Boolean(message))
}

/** Runs `work` with the button disabled and marked busy; keyboard focus comes back to it afterwards. */
async function busy (button, work) {
  const hadFocus = document.activeElement === button
  button.disabled = true
  button.setAttribute('aria-busy', 'true')
  try {
    return await work()
  } finally {
    button.disabled = false
    button.removeAttribute('aria-busy')
    // disabling dropped focus to <body>: give it back unless the work moved it somewhere on purpose
    if (hadFocus && (document.activeElement === document.body || document.activeElement === null)) button.focus()
  }
}

/** Asks in a modal dialog; resolves true when confirmed. */
function confirmAction ({ title, text, ok }) {
  const dialog = $('confirm-dialog')
  setText($('confirm-title'), title)
  setText($('confirm-text'), text)
  setText($('confirm-ok'), ok)
  dialog.returnValue = ''
  return new Promise((resolve) => {
    dialog.addEventListener('close', () => { resolve(dialog.returnValue === 'ok') }, { once: true })
    dialog.showModal()
  })
}

// ---------------------------------------------------------------------------------------------------
// The key

function showKeyScreen (message) {
  show($('dashboard'), false)
  show($('forget-key'), false)
  show($('key-screen'), true)
  setText($('key-error'), message ?? '')
  $('key-input').value = ''
  $('key-input').focus()
}

/** Forgets the key and everything read with it, and asks again. */
function lockOut (message) {
  apiKey = null
  sessionStorage.removeItem(KEY_STORAGE)
  if (socket !== null) { socket.removeAllListeners(); socket.disconnect(); socket = null }
  setLive('off')
  for (const d of document.querySelectorAll('dialog[open]')) d.close()
  state.sessions.clear()
  state.statuses.clear()
  sessionsLoaded = false
  webhooks.reset()
  keys.reset()
  picker.reset()
  savedAudiences.reset()
  schedules.reset()
  contactStatuses.reset()
  insights.reset()
  me = null
  showKeyScreen(message)
}

$('key-form').addEventListener('submit', (e) => {
  e.preventDefault()
  const key = $('key-input').value.trim()
  if (key === '') { setText($('key-error'), 'Enter the API key.'); $('key-input').focus(); return }
  void busy($('key-submit'), async () => {
    setText($('key-error'), 'Checking…')
    try {
      await api.checkKey(key)
    } catch (err) {
      setText($('key-error'), err instanceof ApiError && err.status === 401
        ? 'Wrong API key: the server answered 401 Unauthorized. Check the key and try again.'
        : describe(err))
      $('key-input').select()
      return
    }
    apiKey = key
    sessionStorage.setItem(KEY_STORAGE, key)
    start()
  })
})

$('forget-key').addEventListener('click', () => { lockOut('') })

// ---------------------------------------------------------------------------------------------------
// Live channel

function setLive (mode) {
  const el = $('live')
  el.dataset.state = mode
  setText(el, mode === 'on' ? 'Live' : mode === 'connecting' ? 'Connecting…' : 'Live updates off')
}

function connectSocket () {
  if (typeof window.io !== 'function') {
    banner('The live-update client (/socket.io/socket.io.js) did not load, so nothing updates by itself. Reload the page to try again.')
    return
  }
  setLive('connecting')
  let connectedBefore = false
  socket = window.io({ auth: { apiKey } })
  socket.on('connect', () => {
    setLive('on')
    banner(null)
    // events may have been missed while away: read everything again
    if (connectedBefore) { void refreshAll({ again: true }); savedAudiences.reload() }
    connectedBefore = true
  })
  socket.on('disconnect', (reason) => {
    setLive('connecting')
    // the server closed it (a revoked key, for one): try again; a refused key then locks the page
    if (reason === 'io server disconnect') socket?.connect()
  })
  // every event may have queued webhook deliveries
  socket.onAny(() => { webhooks.onEvent() })
  socket.on('connect_error', (err) => {
    if (err?.message === 'Unauthorized') {
      lockOut('Wrong API key: the live event channel refused it (Unauthorized).')
      return
    }
    setLive('connecting')
  })

  socket.on('connection-status', (e) => {
    const prev = state.sessions.get(e.sessionId)
    if (prev === undefined) { void loadSessions(); return }
    patchSession(e.sessionId, {
      connected: e.connected,
      status: e.status,
      ownNumber: e.connected ? (e.ownNumber ?? prev.ownNumber) : null,
      ...(e.connected ? { pairingCode: null, qrCode: null, linkError: null } : {}),
      ...(e.status === 'logged-out' ? { linkError: 'The account logged this device out. Restart the session to link it again.' } : {})
    })
    scheduleStats()
  })
  socket.on('pairing-code', (e) => { patchSession(e.sessionId, { pairingCode: e.pairingCode, linkError: null }) })
  socket.on('qr-code', (e) => { patchSession(e.sessionId, { qrCode: e.qrCode, linkError: null }) })
  socket.on('pairing-code-error', (e) => { patchSession(e.sessionId, { linkError: e.error }) })
  socket.on('qr-code-error', (e) => { patchSession(e.sessionId, { linkError: e.error }) })
  socket.on('session-created', (e) => { if (!state.sessions.has(e.sessionId)) void loadSessions(); scheduleStats() })
  socket.on('session-deleted', (e) => { removeSession(e.sessionId); scheduleStats() })

  socket.on('status-sent', (e) => {
    if (e.sessionId === state.selectedId) void loadStatuses()
    scheduleStats()
  })
  socket.on('status-send-progress', (e) => {
    if (e.sessionId === state.selectedId && state.sending) setText($('post-result'), `Sending… ${e.sent} of ${e.total} recipients`)
  })
  // live: only the new viewers and the count, right after each commit
  socket.on('status-viewers-added', (e) => {
    if (e.sessionId !== state.selectedId) { scheduleStats(); return }
    const status = state.statuses.get(String(e.statusId))
    if (status === undefined) { void loadStatuses() } else {
      status.viewerCount = e.viewerCount
      renderStatus(status)
    }
    if (state.openStatusId === String(e.statusId)) { state.viewers = mergeViewers(state.viewers, e.viewers); renderViewers() }
    scheduleStats()
  })
  // the full list (at most every 200 ms per status): replaces what the added events built, so LID
  // entries that got their number and merges are shown as stored
  socket.on('status-viewers-update', (e) => {
    if (e.sessionId !== state.selectedId) { scheduleStats(); return }
    const status = state.statuses.get(String(e.statusId))
    if (status === undefined) { void loadStatuses() } else {
      status.viewerCount = e.viewers.filter((v) => v.isReal).length
      renderStatus(status)
    }
    if (state.openStatusId === String(e.statusId)) { state.viewers = e.viewers; renderViewers() }
    scheduleStats()
  })
  // reactions and replies: the list item's counts, and the open dialog's lists
  socket.on('status-reaction', (e) => { onAnswer(e, 'reactions', (list) => applyReaction(list, e)) })
  socket.on('status-reply', (e) => { onAnswer(e, 'replies', (list) => applyReply(list, e)) })
  socket.on('status-deleted', (e) => {
    if (e.sessionId === state.selectedId) removeStatus(String(e.statusId))
    scheduleStats()
  })
  // a scheduled run: its schedule's card is read again (the status's own events update the list)
  socket.on('scheduled-status-fired', (e) => { schedules.onRun(e) })
  socket.on('scheduled-status-failed', (e) => { schedules.onRun(e) })
  socket.on('contact-status', (e) => { contactStatuses.onEvent(e) })
  socket.on('statuses-updated', (e) => {
    insights.onEvent(e)
    // 'sent' and 'deleted' come with status-sent / status-deleted, handled above: no second read of the list
    if (e.action === 'sent' || e.action === 'deleted') return
    if (e.sessionId === state.selectedId) void loadStatuses()
    scheduleStats()
  })
}

// ---------------------------------------------------------------------------------------------------
// Overview: health, stats, storage

// The API allows RATE_LIMIT_MAX requests per 15 minutes per client (300 by default), so events never
// trigger a full overview read: they refresh the statistics (one request) at most every 15 s. Health and
// storage are read at start, on Refresh, and after the user changes something.
const STATS_MIN_GAP_MS = 15_000
let statsTimer = 0
let lastStatsAt = 0
let overviewTimer = 0

function scheduleStats () {
  if (statsTimer !== 0) return
  const delay = Math.max(1500, lastStatsAt + STATS_MIN_GAP_MS - Date.now())
  statsTimer = window.setTimeout(() => { statsTimer = 0; void loadOverview({ health: false, storage: false }) }, delay)
}

/** After the user's own changes: everything, once, shortly (several changes coalesce). */
function scheduleOverview () {
  window.clearTimeout(overviewTimer)
  overviewTimer = window.setTimeout(() => { void loadOverview() }, 800)
}

async function loadOverview ({ health = true, storage = true } = {}) {
  if (health && storage) window.clearTimeout(overviewTimer)
  lastStatsAt = Date.now()
  const skip = Promise.resolve(null)
  // storage spans every session: the admin key's only
  const withStorage = storage && (me === null || me.admin === true)
  const results = await Promise.allSettled([health ? api.health() : skip, api.stats(), withStorage ? api.storage() : skip])
  const failed = results.find((r) => r.status === 'rejected')
  setText($('overview-error'), failed === undefined ? '' : describe(failed.reason))
  const [h, st, sto] = results.map((r) => r.status === 'fulfilled' ? r.value : null)
  if (h !== null) {
    state.health = h
    state.healthReadAt = Date.now()
    renderHealth()
  }
  if (st !== null) {
    setText($('ov-sessions'), `${st.connectedSessions} / ${st.totalSessions}`)
    setText($('ov-sessions-sub'), 'connected / total')
    setText($('ov-statuses'), String(st.totalStatuses))
    setText($('ov-statuses-sub'), st.lastStatusSent ? `last ${formatAgo(st.lastStatusSent)}` : 'none sent yet')
    setText($('ov-viewers'), String(st.totalViewers))
    setText($('ov-answers'), `other people's views · ♥ ${st.totalReactions ?? 0} · ↩ ${st.totalReplies ?? 0}`)
  }
  if (!withStorage && storage) {
    setText($('ov-storage'), '–')
    setText($('ov-storage-sub'), 'admin key only')
  }
  if (sto !== null) {
    const db = (sto.database?.bytes ?? 0) + (sto.database?.walBytes ?? 0)
    const uploads = sto.uploads?.count ?? 0
    setText($('ov-storage'), formatBytes(db + (sto.uploads?.bytes ?? 0)))
    setText($('ov-storage-sub'), `database ${formatBytes(db)} · ${uploads === 0 ? 'no uploads' : `${plural(uploads, 'upload')} ${formatBytes(sto.uploads.bytes)}`}`)
  }
}

function renderHealth () {
  const hl = state.health
  if (hl === null) return
  const uptime = hl.uptime + (Date.now() - state.healthReadAt) / 1000
  setText($('ov-health'), hl.status === 'healthy' ? 'Healthy' : hl.status === 'degraded' ? 'Degraded' : String(hl.status))
  setText($('ov-health-sub'), `v${hl.version} · up ${formatDuration(uptime)}`)
  // the date the platform stops accepting this client build, once it is within CLIENT_EXPIRY_WARN_DAYS
  const platform = hl.checks?.platform
  const expiring = platform?.clientExpiresSoon === true && typeof platform.clientExpiresAt === 'string'
  setText($('ov-health-expiry'), expiring ? `Client build refused from ${formatDateTime(platform.clientExpiresAt)}: upgrade` : '')
  show($('ov-health-expiry'), expiring)
}

// the uptime ticks on locally; no request needed
setInterval(renderHealth, 30_000)

$('overview-refresh').addEventListener('click', (e) => { void busy(e.currentTarget, () => loadOverview()) })

// ---------------------------------------------------------------------------------------------------
// Sessions

/** sessionId → card { el, update } */
const cards = new Map()
let sessionsLoaded = false

async function loadSessions () {
  try {
    const list = await api.sessions()
    setText($('sessions-error'), '')
    const seen = new Set()
    for (const s of list) {
      seen.add(s.sessionId)
      const prev = state.sessions.get(s.sessionId)
      state.sessions.set(s.sessionId, { ...s, linkError: s.connected ? null : prev?.linkError ?? null })
    }
    for (const id of [...state.sessions.keys()]) if (!seen.has(id)) state.sessions.delete(id)
    // the create form stays open only when there is nothing else to do
    if (!sessionsLoaded && list.length > 0) $('create-details').open = false
    sessionsLoaded = true
    renderSessions()
    $('session-list').setAttribute('aria-busy', 'false')
  } catch (err) {
    setText($('sessions-error'), describe(err))
  }
}

function patchSession (sessionId, patch) {
  const s = state.sessions.get(sessionId)
  if (s === undefined) { void loadSessions(); return }
  const wasConnected = s.connected
  Object.assign(s, patch)
  cards.get(sessionId)?.update(s)
  if (sessionId === state.selectedId) {
    renderDetailHead()
    if (wasConnected !== s.connected) void loadStatuses()
  }
}

function removeSession (sessionId) {
  state.sessions.delete(sessionId)
  renderSessions()
}

function renderSessions () {
  const list = $('session-list')
  for (const [id, card] of cards) {
    if (!state.sessions.has(id)) { card.el.remove(); cards.delete(id) }
  }
  const ordered = [...state.sessions.values()].sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.sessionId.localeCompare(b.sessionId))
  ordered.forEach((s, i) => {
    let card = cards.get(s.sessionId)
    if (card === undefined) { card = sessionCard(s.sessionId); cards.set(s.sessionId, card) }
    card.update(s)
    // move only what is out of place: moving a node that holds focus would drop it
    if (list.children[i] !== card.el) list.insertBefore(card.el, list.children[i] ?? null)
  })
  show($('sessions-empty'), ordered.length === 0)
  webhooks.setSessions(ordered)
  if (state.selectedId !== null && state.sessions.has(state.selectedId)) { renderDetailHead(); return }
  // nothing (valid) selected: the first connected session, else the first one
  select(ordered.length === 0 ? null : (ordered.find((s) => s.connected) ?? ordered[0]).sessionId)
}

function stateLabel (s) {
  if (s.connected) return 'Connected'
  // a code on show: the socket is up and waits for the phone
  if (s.status !== 'logged-out' && (s.pairingCode || s.qrCode)) return 'Waiting to link'
  return STATE_LABELS[s.status] ?? 'Not connected'
}

function formatPairingCode (code) {
  return typeof code === 'string' && code.length === 8 ? `${code.slice(0, 4)}-${code.slice(4)}` : code ?? ''
}

/** One session's card; built once, then updated in place so focus and typing survive live updates. */
function sessionCard (sessionId) {
  const name = h('span', { class: 'session-name' })
  const idText = h('span', { class: 'session-id' })
  const selectBtn = h('button', { type: 'button', class: 'session-select', onclick: () => { select(sessionId) } }, name, idText)
  const badge = h('span', { class: 'badge' })
  const meta = h('p', { class: 'session-meta' })

  const code = h('p', { class: 'pairing-code', 'aria-live': 'polite' })
  const codeHint = h('p', { class: 'hint', text: 'On the phone: Linked devices → Link a device → Link with phone number instead, then type this code.' })
  const codeBox = h('div', { class: 'code-box' }, h('p', { class: 'code-label', text: 'Pairing code' }), code, codeHint)
  const qr = h('img', { class: 'qr', width: 220, height: 220, alt: '' })
  const qrHint = h('p', { class: 'hint', text: 'On the phone: Linked devices → Link a device, then scan this code. It refreshes by itself.' })
  const qrBox = h('div', { class: 'qr-box' }, qr, qrHint)
  const waiting = h('p', { class: 'waiting' })
  const linkError = h('p', { class: 'form-error', role: 'alert' })
  const newCodeBtn = h('button', { type: 'button', class: 'button-quiet', text: 'New pairing code', onclick: () => { void requestCode() } })
  const linking = h('div', { class: 'linking' }, codeBox, qrBox, waiting, linkError, newCodeBtn)

  const restartBtn = h('button', { type: 'button', class: 'button-quiet', text: 'Restart', onclick: () => { void restart() } })
  const phoneBtn = h('button', { type: 'button', class: 'button-quiet', text: 'Change number', 'aria-expanded': 'false', onclick: () => { togglePhoneForm() } })
  const deleteBtn = h('button', { type: 'button', class: 'button-danger-quiet', text: 'Delete', onclick: () => { void remove() } })
  const actions = h('div', { class: 'session-actions' }, restartBtn, phoneBtn, deleteBtn)

  const phoneId = `phone-${sessionId}`
  const phoneInput = h('input', { id: phoneId, type: 'tel', autocomplete: 'tel', required: true, placeholder: '15551234567' })
  const phoneError = h('p', { class: 'form-error', role: 'alert' })
  const phoneSave = h('button', { type: 'submit', class: 'button-primary', text: 'Save number' })
  const phoneForm = h('form', { class: 'phone-form', hidden: true, onsubmit: (e) => { e.preventDefault(); void savePhone() } },
    h('label', { for: phoneId, text: 'New phone number' }), phoneInput, phoneError,
    h('div', { class: 'row' }, phoneSave, h('button', { type: 'button', class: 'button-quiet', text: 'Cancel', onclick: () => { togglePhoneForm(false) } })))
  const message = h('p', { class: 'card-message', role: 'status' })

  const el = h('li', { class: 'session-card', dataset: { sessionId } },
    h('div', { class: 'session-head' }, selectBtn, badge), meta, linking, actions, phoneForm, message)

  const current = () => state.sessions.get(sessionId)
  let wasConnected = false

  function update (s) {
    el.dataset.state = s.status ?? (s.connected ? 'open' : 'close')
    const selected = state.selectedId === sessionId
    el.classList.toggle('selected', selected)
    selectBtn.setAttribute('aria-pressed', String(selected))
    setText(name, s.sessionName)
    setText(idText, s.sessionId)
    setText(badge, stateLabel(s))
    badge.dataset.state = el.dataset.state
    const how = s.authMethod === 'qrcode' ? 'QR code' : `Pairing code for ${phone(s.phoneNumber)}`
    setText(meta, s.connected ? `Linked as ${phone(s.ownNumber) || 'unknown number'} · ${s.authMethod === 'qrcode' ? 'QR code' : 'pairing code'}` : how)

    show(linking, !s.connected)
    if (s.connected && !wasConnected) setText(message, '')
    wasConnected = s.connected
    const isPairing = s.authMethod !== 'qrcode'
    const hasCode = isPairing && typeof s.pairingCode === 'string' && s.pairingCode !== ''
    const hasQr = !isPairing && typeof s.qrCode === 'string' && QR_DATA_URL.test(s.qrCode)
    show(codeBox, hasCode)
    setText(code, formatPairingCode(s.pairingCode))
    show(qrBox, hasQr)
    if (hasQr && qr.getAttribute('src') !== s.qrCode) qr.src = s.qrCode
    qr.alt = `QR code to link session ${s.sessionName}`
    const waitingText = s.status === 'logged-out' || s.linkError ? '' : isPairing ? (hasCode ? '' : 'Waiting for a pairing code…') : (hasQr ? '' : 'Waiting for a QR code…')
    setText(waiting, waitingText)
    show(waiting, waitingText !== '')
    setText(linkError, s.linkError ?? '')
    show(newCodeBtn, isPairing)
    show(phoneBtn, isPairing)
    if (!isPairing) show(phoneForm, false)
  }

  async function requestCode () {
    await busy(newCodeBtn, async () => {
      try {
        const r = await api.requestPairingCode(sessionId)
        patchSession(sessionId, { pairingCode: r.pairingCode, linkError: null })
        setText(message, 'New pairing code issued.')
      } catch (err) { setText(message, ''); patchSession(sessionId, { linkError: describe(err) }) }
    })
  }

  async function restart () {
    await busy(restartBtn, async () => {
      try {
        const r = await api.restartSession(sessionId)
        patchSession(sessionId, { linkError: null })
        setText(message, r.message)
      } catch (err) { setText(message, describe(err)) }
    })
  }

  function togglePhoneForm (open = phoneForm.hidden) {
    show(phoneForm, open)
    phoneBtn.setAttribute('aria-expanded', String(open))
    setText(phoneError, '')
    if (open) { phoneInput.value = current()?.phoneNumber ?? ''; phoneInput.focus() } else phoneBtn.focus()
  }

  async function savePhone () {
    const digits = digitsOf(phoneInput.value)
    if (!PHONE.test(digits)) { setText(phoneError, 'Enter 10 to 15 digits with country code.'); phoneInput.focus(); return }
    await busy(phoneSave, async () => {
      try {
        const r = await api.setPhoneNumber(sessionId, digits)
        patchSession(sessionId, { phoneNumber: r.phoneNumber })
        togglePhoneForm(false)
        setText(message, `${r.message}. Restart or request a new pairing code to link with it.`)
      } catch (err) { setText(phoneError, describe(err)) }
    })
  }

  async function remove () {
    const s = current()
    const ok = await confirmAction({
      title: `Delete “${s?.sessionName ?? sessionId}”?`,
      text: 'This logs the device out and removes the session with its statuses, viewers and uploaded media. It cannot be undone.',
      ok: 'Delete session'
    })
    if (!ok) { deleteBtn.focus(); return }
    await busy(deleteBtn, async () => {
      try {
        await api.deleteSession(sessionId)
        removeSession(sessionId)
        toast(`Session “${s?.sessionName ?? sessionId}” deleted.`)
        scheduleOverview()
        $('sessions-title').focus()
      } catch (err) { setText(message, describe(err)) }
    })
  }

  return { el, update, say: (text) => { setText(message, text) } }
}

// create
function syncCreateMethod () {
  const qr = $('create-form').elements.authMethod.value === 'qrcode'
  show($('create-phone-field'), !qr)
  // a hidden required field would block the form
  $('create-phone').disabled = qr
}
for (const radio of $('create-form').querySelectorAll('input[name="authMethod"]')) radio.addEventListener('change', syncCreateMethod)
syncCreateMethod()

$('create-form').addEventListener('submit', (e) => {
  e.preventDefault()
  const form = $('create-form')
  const authMethod = form.elements.authMethod.value
  const body = {
    sessionId: $('create-id').value.trim(),
    sessionName: $('create-name').value.trim(),
    authMethod
  }
  if (authMethod === 'pairing') {
    body.phoneNumber = digitsOf($('create-phone').value)
    if (!PHONE.test(body.phoneNumber)) {
      setText($('create-error'), 'Enter the phone number as 10 to 15 digits with country code.')
      $('create-phone').focus()
      return
    }
  }
  void busy($('create-submit'), async () => {
    setText($('create-error'), '')
    try {
      const r = await api.createSession(body)
      form.reset()
      syncCreateMethod()
      $('create-details').open = false
      await loadSessions()
      select(r.sessionId)
      cards.get(r.sessionId)?.say(r.authMethod === 'qrcode'
        ? 'Session created. Scan the QR code with the phone to link it.'
        : 'Session created. Type the pairing code on the phone to link it.')
      // the form just closed: focus goes to the new session's card, where its code appears
      cards.get(r.sessionId)?.el.querySelector('.session-select')?.focus()
      scheduleOverview()
    } catch (err) {
      setText($('create-error'), describe(err))
    }
  })
})

$('sessions-refresh').addEventListener('click', (e) => { void busy(e.currentTarget, loadSessions) })

// ---------------------------------------------------------------------------------------------------
// The selected session: post form and sent statuses

function select (sessionId) {
  const changed = state.selectedId !== sessionId
  state.selectedId = sessionId
  if (sessionId === null) sessionStorage.removeItem(SELECTED_STORAGE)
  else sessionStorage.setItem(SELECTED_STORAGE, sessionId)
  for (const [id, card] of cards) { const s = state.sessions.get(id); if (s !== undefined) card.update(s) }
  renderDetailHead()
  if (changed) {
    state.statuses.clear()
    $('status-list').replaceChildren()
    setText($('post-error'), '')
    setText($('post-result'), '')
    if ($('status-dialog').open) $('status-dialog').close()
  }
  if (sessionId !== null && (changed || state.statuses.size === 0)) void loadStatuses()
}

function renderDetailHead () {
  const s = state.selectedId === null ? undefined : state.sessions.get(state.selectedId)
  show($('detail-none'), s === undefined)
  show($('detail-body'), s !== undefined)
  // the panels of the selected session read what they show (once per session)
  const id = s === undefined ? null : state.selectedId
  picker.setSession(id)
  savedAudiences.setSession(id)
  schedules.setSession(id)
  contactStatuses.setSession(id)
  insights.setSession(id)
  const badge = $('detail-badge')
  show(badge, s !== undefined)
  if (s === undefined) { setText($('detail-title'), 'Statuses'); return }
  setText($('detail-title'), s.sessionName)
  setText(badge, s.connected ? `Connected as ${phone(s.ownNumber)}` : stateLabel(s))
  badge.dataset.state = s.connected ? 'open' : s.status
  show($('post-offline'), !s.connected)
  $('post-fields').disabled = !s.connected
}

async function loadStatuses () {
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

function statusSummary (s) {
  if (s.type === 'text') return s.content
  if (s.caption) return s.caption
  if (s.type === 'url') return s.content
  return s.content.replace(/^[0-9]+-[0-9a-f]{12}-/, '')
}

/** Builds or updates the list item of one status. */
function renderStatus (s) {
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

function removeStatus (id) {
  state.statuses.delete(id)
  renderStatuses()
}

$('statuses-refresh').addEventListener('click', (e) => { void busy(e.currentTarget, loadStatuses) })

// post form ------------------------------------------------------------------------------------------

function postType () {
  return $('post-form').elements.type.value
}

const MEDIA_FILE_LABELS = { image: 'Image file', video: 'Video file', audio: 'Audio file (OGG/Opus goes out as a voice note; MP3, M4A, AAC, WAV as audio)' }

function syncPostType () {
  const type = postType()
  show($('post-text'), type === 'text')
  const media = type === 'image' || type === 'video' || type === 'audio'
  show($('post-media'), media)
  show($('post-url'), type === 'url')
  // audio carries no caption on the platform
  show($('post-caption-field'), type !== 'text' && type !== 'audio')
  if (media) {
    setText($('post-file-label'), MEDIA_FILE_LABELS[type])
    const file = $('post-file')
    // .opus files often come without an audio/* type
    const accept = type === 'audio' ? 'audio/*,.opus' : `${type}/*`
    if (file.accept !== accept) { file.accept = accept; file.value = '' }
  }
  setText($('post-error'), '')
}
for (const radio of $('post-form').querySelectorAll('input[name="type"]')) radio.addEventListener('change', syncPostType)
syncPostType()

function syncPreview () {
  const text = $('post-text-input').value
  setText($('post-preview-text'), text.trim() === '' ? 'Your status text' : text)
  const preview = $('post-preview')
  preview.style.backgroundColor = $('post-bg').value
  preview.dataset.font = $('post-font').value
  preview.classList.toggle('placeholder', text.trim() === '')
}
for (const id of ['post-text-input', 'post-bg', 'post-font']) $(id).addEventListener('input', syncPreview)
syncPreview()

function setUploadProgress (fraction) {
  const pct = Math.round(fraction * 100)
  $('upload-progress').value = pct
  setText($('upload-label'), fraction >= 1 ? 'Uploaded' : `Uploading ${pct} %`)
}

$('post-form').addEventListener('submit', (e) => {
  e.preventDefault()
  const sessionId = state.selectedId
  if (sessionId === null) return
  const type = postType()
  const errorEl = $('post-error')
  setText(errorEl, '')
  setText($('post-result'), '')
  setText(picker.errorEl, '')
  schedules.clearErrors()

  const who = picker.read()
  if (who.error !== undefined) { setText(picker.errorEl, who.error); who.focus.focus(); return }
  const mentioned = mentions.read()
  if (mentioned.error !== undefined) { mentioned.focus.focus(); return }
  const later = schedules.isLater()
  const when = later ? schedules.readWhen() : null
  if (when !== null && when.error !== undefined) { when.focus.focus(); return }

  /** @type {Record<string, unknown>} */
  const body = { type, ...who.fields, ...(mentioned.mentions.length > 0 ? { mentions: mentioned.mentions } : {}) }
  const caption = $('post-caption').value.trim()
  if (type !== 'text' && type !== 'audio' && caption !== '') body.caption = caption

  let file = null
  if (type === 'text') {
    const text = $('post-text-input').value
    if (text.trim() === '') { setText(errorEl, 'Write the text of the status.'); $('post-text-input').focus(); return }
    body.content = text
    body.backgroundColor = $('post-bg').value.toUpperCase()
    body.font = Number($('post-font').value)
  } else if (type === 'url') {
    const url = $('post-url-input').value.trim()
    if (!/^https?:\/\/\S+$/i.test(url)) { setText(errorEl, 'Enter a full http:// or https:// link to the media.'); $('post-url-input').focus(); return }
    body.content = url
  } else {
    file = $('post-file').files?.[0] ?? null
    if (file === null) { setText(errorEl, `Choose ${type === 'image' ? 'an image' : type === 'video' ? 'a video' : 'an audio'} file to upload.`); $('post-file').focus(); return }
  }

  const submit = $('post-submit')
  state.sending = true
  $('post-form').setAttribute('aria-busy', 'true')
  void busy(submit, async () => {
    try {
      if (file !== null) {
        show($('upload-row'), true)
        setUploadProgress(0)
        try {
          body.content = await api.upload(type, file, setUploadProgress)
        } catch (err) {
          show($('upload-row'), false)
          throw err
        }
      }
      if (when !== null) {
        const created = await schedules.create(sessionId, body, when)
        setText($('post-result'), created.nextRunAt === null ? 'Scheduled.' : `Scheduled: the first run is ${formatDateTime(created.nextRunAt)} (schedule ${created.id}).`)
      } else {
        setText($('post-result'), 'Sending…')
        const r = await api.sendStatus(sessionId, body)
        setText($('post-result'), `${r.message} (status #${r.statusId}).`)
      }
      // keep type, colour, font, audience and timing for the next one
      $('post-text-input').value = ''
      $('post-caption').value = ''
      $('post-url-input').value = ''
      $('post-file').value = ''
      mentions.clear()
      show($('upload-row'), false)
      syncPreview()
      if (sessionId === state.selectedId && when === null) await loadStatuses()
      scheduleOverview()
    } catch (err) {
      setText($('post-result'), '')
      // an error naming a field is shown next to it
      if (when !== null) schedules.showError(describe(err), errorEl)?.focus()
      else showFieldError(describe(err), [['body.targetNumbers', picker.errorEl], ['body.audience', picker.errorEl], ['body.mentions', mentions.errorEl]], errorEl)
    } finally {
      state.sending = false
      $('post-form').removeAttribute('aria-busy')
      renderDetailHead()
    }
  })
})

// audience picker, saved audiences, schedules (public/picker.js, audiences.js, schedules.js) ------------

const picker = createAudiencePicker({ api, describe, loadSaved: () => { savedAudiences.ensure() } })
const mentions = createMentionsField()
const savedAudiences = createSavedAudiencesPanel({ api, describe, busy, confirmAction, toast, onChange: (list) => { picker.setSaved(list) } })
const schedules = createSchedules({
  api,
  describe,
  busy,
  confirmAction,
  toast,
  summarize: (body) => `${TYPE_LABELS[body.type] ?? body.type}: ${statusSummary({ caption: '', ...body })}`,
  audienceText: (body) => picker.describe(body),
  audienceError: picker.errorEl
})
const contactStatuses = createContactStatusesPanel({ api, describe, busy, confirmAction, toast })
const insights = createInsightsPanel({ api, describe, busy, toast })

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
function onAnswer (e, which, apply) {
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
function mergeViewers (known, added) {
  const key = (v) => v.number ?? v.jid
  const byKey = new Map(known.map((v) => [key(v), v]))
  for (const v of added) byKey.set(key(v), v)
  return [...byKey.values()]
}

function renderViewers () {
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

// ---------------------------------------------------------------------------------------------------
// Webhooks (public/webhooks.js)

const webhooks = createWebhooksPanel({ api, describe, busy, confirmAction, toast })

// ---------------------------------------------------------------------------------------------------
// Keys (public/keys.js): the admin key manages scoped keys; a scoped key sees only its own sessions,
// which the API already filters, and no storage figures (they span every session)

const keys = createKeysPanel({ api, describe, busy, confirmAction, toast })
/** GET /api/keys/me: who the key is */
let me = null

async function loadMe () {
  try {
    me = await api.whoami()
  } catch {
    me = null
  }
  const admin = me === null || me.admin === true
  keys.setAdmin(me !== null && admin)
  setText($('key-who'), me === null || admin ? '' : `Scoped key “${me.name}” · ${me.scopes.join(', ')}`)
}

// ---------------------------------------------------------------------------------------------------
// Start

/** `again`: after a reconnect, when events may have been missed (the first time, selecting the session reads its panels) */
async function refreshAll ({ again = false } = {}) {
  await loadMe()
  await Promise.all([loadOverview(), loadSessions(), webhooks.load(), keys.load()])
  if (state.selectedId !== null) await Promise.all([loadStatuses(), ...(again ? [schedules.load(), contactStatuses.load()] : [])])
}

function start () {
  show($('key-screen'), false)
  show($('dashboard'), true)
  show($('forget-key'), true)
  setText($('key-error'), '')
  connectSocket()
  void refreshAll()
}

if (apiKey === null || apiKey === '') showKeyScreen('')
else start()
