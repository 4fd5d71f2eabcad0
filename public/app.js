// Status Tracker dashboard: plain ES modules, built only on the public REST API and the socket.io channel.
// This one is the page's entry (index.html): the key screen and the start; each view is a module of its own:
// page.js (shared services), overview.js, sessions.js and session-card.js, post-form.js, statuses.js (list and
// dialog), panels.js (the panels of picker.js, audiences.js, schedules.js, …) and live.js (socket.io).
import { $, KEY_STORAGE, auth, state, api, onKeyRefused, describe, busy } from './page.js'
import { ApiError } from './api.js'
import { setText, show } from './dom.js'
import { picker, savedAudiences, schedules, contactStatuses, insights, webhooks, keys } from './panels.js'
import { loadOverview } from './overview.js'
import { loadSessions, resetSessions } from './sessions.js'
import { loadStatuses } from './statuses.js'
import { connectSocket, disconnectSocket } from './live.js'
// the post form's listeners (it exports nothing)
import './post-form.js'

onKeyRefused((message) => { lockOut(`The server refused the API key (${message}). Enter the right key.`) })

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
  auth.apiKey = null
  sessionStorage.removeItem(KEY_STORAGE)
  disconnectSocket()
  for (const d of document.querySelectorAll('dialog[open]')) d.close()
  state.sessions.clear()
  state.statuses.clear()
  resetSessions()
  webhooks.reset()
  keys.reset()
  picker.reset()
  savedAudiences.reset()
  schedules.reset()
  contactStatuses.reset()
  insights.reset()
  auth.me = null
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
    auth.apiKey = key
    sessionStorage.setItem(KEY_STORAGE, key)
    start()
  })
})

$('forget-key').addEventListener('click', () => { lockOut('') })

/** GET /api/keys/me: who the key is (a scoped key sees only its own sessions, which the API already filters,
 * and no storage figures: they span every session) */
async function loadMe () {
  try {
    auth.me = await api.whoami()
  } catch {
    auth.me = null
  }
  const { me } = auth
  const admin = me === null || me.admin === true
  keys.setAdmin(me !== null && admin)
  setText($('key-who'), me === null || admin ? '' : `Scoped key “${me.name}” · ${me.scopes.join(', ')}`)
}

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
  connectSocket({ refreshAll, lockOut })
  void refreshAll()
}

if (auth.apiKey === null || auth.apiKey === '') showKeyScreen('')
else start()
