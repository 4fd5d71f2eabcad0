// One session's card: state, pairing code or QR code, restart, change number, delete.
import { $, state, api, describe, toast, busy, confirmAction } from './page.js'
import { h, setText, show, phone, PHONE, digitsOf } from './dom.js'
import { scheduleOverview } from './overview.js'

const QR_DATA_URL = /^data:image\/(png|jpeg|gif|webp);base64,[A-Za-z0-9+/=]+$/

const STATE_LABELS = { open: 'Connected', connecting: 'Connecting…', close: 'Not connected', 'logged-out': 'Logged out' }

export function stateLabel (s) {
  if (s.connected) return 'Connected'
  // a code on show: the socket is up and waits for the phone
  if (s.status !== 'logged-out' && (s.pairingCode || s.qrCode)) return 'Waiting to link'
  return STATE_LABELS[s.status] ?? 'Not connected'
}

function formatPairingCode (code) {
  return typeof code === 'string' && code.length === 8 ? `${code.slice(0, 4)}-${code.slice(4)}` : code ?? ''
}

/**
 * One session's card; built once, then updated in place so focus and typing survive live updates. `select`,
 * `patchSession` and `removeSession`: the session list's (sessions.js).
 */
export function sessionCard (sessionId, { select, patchSession, removeSession }) {
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
