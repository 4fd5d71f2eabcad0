// The overview: health, statistics and storage (public/index.html's overview cards).
/* global setInterval */
import { $, auth, state, api, describe, busy } from './page.js'
import { setText, show, formatDateTime, formatAgo, formatBytes, formatDuration, plural } from './dom.js'

// The API allows RATE_LIMIT_MAX requests per 15 minutes per client (300 by default), so events never
// trigger a full overview read: they refresh the statistics (one request) at most every 15 s. Health and
// storage are read at start, on Refresh, and after the user changes something.
const STATS_MIN_GAP_MS = 15_000
let statsTimer = 0
let lastStatsAt = 0
let overviewTimer = 0

export function scheduleStats () {
  if (statsTimer !== 0) return
  const delay = Math.max(1500, lastStatsAt + STATS_MIN_GAP_MS - Date.now())
  statsTimer = window.setTimeout(() => { statsTimer = 0; void loadOverview({ health: false, storage: false }) }, delay)
}

/** After the user's own changes: everything, once, shortly (several changes coalesce). */
export function scheduleOverview () {
  window.clearTimeout(overviewTimer)
  overviewTimer = window.setTimeout(() => { void loadOverview() }, 800)
}

export async function loadOverview ({ health = true, storage = true } = {}) {
  if (health && storage) window.clearTimeout(overviewTimer)
  lastStatsAt = Date.now()
  const skip = Promise.resolve(null)
  // storage spans every session: the admin key's only
  const withStorage = storage && (auth.me === null || auth.me.admin === true)
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
