// The dashboard's shared page services: element lookup, the state the views read, the API client, errors,
// toast, banner, busy buttons and the confirmation dialog.
import { createApi, ApiError } from './api.js'
import { setText, show } from './dom.js'

export const KEY_STORAGE = 'statusTracker.apiKey'
export const SELECTED_STORAGE = 'statusTracker.selectedSession'

export const $ = (id) => {
  const el = document.getElementById(id)
  if (el === null) throw new Error(`missing #${id}`)
  return el
}

export const TYPE_LABELS = { text: 'Text', image: 'Image', video: 'Video', audio: 'Audio', url: 'URL' }

/** the API key, and who it is (GET /api/keys/me; app.js reads it) */
export const auth = { apiKey: sessionStorage.getItem(KEY_STORAGE), /** @type {any} */ me: null }
export const state = {
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

let keyRefused = (_message) => {}
/** What to do when the server refuses the key (app.js: lock the page). */
export function onKeyRefused (handler) { keyRefused = handler }

export const api = createApi(() => auth.apiKey, (message) => { keyRefused(message) })

export function describe (err) {
  return err instanceof ApiError ? err.message : `Unexpected error: ${err instanceof Error ? err.message : String(err)}`
}

let toastTimer = 0
export function toast (message) {
  const el = $('toast')
  setText(el, message)
  el.classList.add('toast-visible')
  window.clearTimeout(toastTimer)
  toastTimer = window.setTimeout(() => { el.classList.remove('toast-visible') }, 5000)
}

export function banner (message) {
  const el = $('banner')
  setText(el, message ?? '')
  show(el, Boolean(message))
}

/** Runs `work` with the button disabled and marked busy; keyboard focus comes back to it afterwards. */
export async function busy (button, work) {
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
export function confirmAction ({ title, text, ok }) {
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
