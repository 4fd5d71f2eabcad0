// The live channel: socket.io events patch the views in place.
import { $, auth, state, banner } from './page.js'
import { setText } from './dom.js'
import { applyReaction, applyReply } from './reach.js'
import { savedAudiences, schedules, contactStatuses, insights, webhooks } from './panels.js'
import { loadSessions, patchSession, removeSession } from './sessions.js'
import { loadStatuses, renderStatus, removeStatus, mergeViewers, renderViewers, onAnswer } from './statuses.js'
import { scheduleStats } from './overview.js'

/** @type {any} socket.io client socket */
let socket = null

function setLive (mode) {
  const el = $('live')
  el.dataset.state = mode
  setText(el, mode === 'on' ? 'Live' : mode === 'connecting' ? 'Connecting…' : 'Live updates off')
}

/** `refreshAll`: reads everything again after a reconnect; `lockOut`: the channel refused the key. */
export function connectSocket ({ refreshAll, lockOut }) {
  if (typeof window.io !== 'function') {
    banner('The live-update client (/socket.io/socket.io.js) did not load, so nothing updates by itself. Reload the page to try again.')
    return
  }
  setLive('connecting')
  let connectedBefore = false
  socket = window.io({ auth: { apiKey: auth.apiKey } })
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
  // the full list (at most every 200 ms per status, less often for a long list): replaces what the added events built, so LID
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

/** Ends the live channel (the key is forgotten). */
export function disconnectSocket () {
  if (socket !== null) { socket.removeAllListeners(); socket.disconnect(); socket = null }
  setLive('off')
}
