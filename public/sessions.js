// The sessions: the list of cards (session-card.js), the create form, and the selected session's head.
import { $, SELECTED_STORAGE, state, api, describe, busy } from './page.js'
import { setText, show, phone, PHONE, digitsOf } from './dom.js'
import { sessionCard, stateLabel } from './session-card.js'
import { picker, savedAudiences, schedules, contactStatuses, insights, webhooks } from './panels.js'
import { loadStatuses } from './statuses.js'
import { scheduleOverview } from './overview.js'

/** sessionId → card { el, update } */
const cards = new Map()
let sessionsLoaded = false

export async function loadSessions () {
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

export function patchSession (sessionId, patch) {
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

export function removeSession (sessionId) {
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
    if (card === undefined) { card = sessionCard(s.sessionId, { select, patchSession, removeSession }); cards.set(s.sessionId, card) }
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

export function select (sessionId) {
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

export function renderDetailHead () {
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

/** the next read of the list is a first one again (the key changed) */
export function resetSessions () {
  sessionsLoaded = false
}
