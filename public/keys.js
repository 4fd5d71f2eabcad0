// The Keys panel (admin key only): scoped keys for clients and tenants. A key is shown once, when it is
// made; the service keeps a hash. Revoking refuses the key at once and closes its live connections.
import { h, setText, show, formatDateTime } from './dom.js'

const $ = (id) => document.getElementById(id)
const SCOPES = ['read', 'send', 'manage']

/**
 * @param {{ api: any, describe: (err: unknown) => string, busy: (button: HTMLElement, work: () => Promise<unknown>) => Promise<unknown>,
 *           confirmAction: (o: { title: string, text: string, ok: string }) => Promise<boolean>, toast: (message: string) => void }} deps
 */
export function createKeysPanel ({ api, describe, busy, confirmAction, toast }) {
  let enabled = false

  $('key-create-form').addEventListener('submit', (e) => {
    e.preventDefault()
    const errorEl = $('key-create-error')
    setText(errorEl, '')
    const name = $('key-name').value.trim()
    if (name === '') { setText(errorEl, 'Give the key a name (the client or tenant it is for).'); $('key-name').focus(); return }
    const scopes = SCOPES.filter((s) => $(`key-scope-${s}`).checked)
    if (scopes.length === 0) { setText(errorEl, 'Choose at least one scope.'); $('key-scope-read').focus(); return }
    const raw = $('key-sessions').value.trim()
    const sessions = raw === '*' ? '*' : raw.split(',').map((s) => s.trim()).filter((s) => s !== '')
    if (sessions !== '*' && sessions.some((s) => !/^[A-Za-z0-9_-]{1,64}$/.test(s))) {
      setText(errorEl, 'Sessions: * for every session, or session ids separated by commas.')
      $('key-sessions').focus()
      return
    }
    void busy($('key-create-submit'), async () => {
      try {
        const created = await api.createKey({ name, sessions, scopes })
        $('key-create-form').reset()
        $('key-create-details').open = false
        setText($('key-secret-name'), created.name)
        setText($('key-secret-value'), created.key)
        show($('key-secret'), true)
        $('key-secret-copy').focus()
        await load()
      } catch (err) {
        setText(errorEl, describe(err))
      }
    })
  })

  $('key-secret-copy').addEventListener('click', () => {
    const value = $('key-secret-value').textContent ?? ''
    const selectIt = () => { window.getSelection()?.selectAllChildren($('key-secret-value')) }
    const clipboard = window.navigator.clipboard
    if (clipboard === undefined) { selectIt(); return }
    clipboard.writeText(value).then(() => { toast('Key copied.') }, selectIt)
  })
  $('key-secret-done').addEventListener('click', () => {
    setText($('key-secret-value'), '')
    show($('key-secret'), false)
    $('keys-title').focus()
  })

  async function load () {
    if (!enabled) return
    try {
      const keys = await api.keys()
      setText($('keys-error'), '')
      $('key-list').replaceChildren(...keys.map(card))
      show($('keys-empty'), keys.length === 0)
    } catch (err) {
      setText($('keys-error'), describe(err))
    }
  }

  function card (key) {
    const sessions = key.sessions === '*' ? 'every session' : key.sessions.length === 0 ? 'no sessions' : key.sessions.join(', ')
    const revokeBtn = h('button', {
      type: 'button',
      class: 'button-danger-quiet',
      text: 'Revoke',
      onclick: () => {
        void (async () => {
          const ok = await confirmAction({ title: `Revoke ${key.name}?`, text: 'Requests with this key are refused from now on and its live connections are closed.', ok: 'Revoke' })
          if (!ok) return
          await busy(revokeBtn, async () => {
            try {
              await api.revokeKey(key.id)
              toast(`${key.name} revoked.`)
              await load()
            } catch (err) {
              setText($('keys-error'), describe(err))
            }
          })
        })()
      }
    })
    return h('li', { class: 'session-card apikey-card', dataset: { keyId: key.id } },
      h('div', { class: 'session-head' }, h('strong', { text: key.name }), h('code', { class: 'badge', text: key.id })),
      h('p', { class: 'session-meta', text: `Sessions: ${sessions} · Scopes: ${key.scopes.join(', ')} · made ${formatDateTime(key.createdAt)}` }),
      h('div', { class: 'session-actions' }, revokeBtn))
  }

  $('keys-refresh').addEventListener('click', (e) => { void busy(e.currentTarget, load) })

  return {
    load,
    /** shown for the admin key only; a scoped key cannot list or make keys */
    setAdmin (admin) {
      enabled = admin
      show($('keys'), admin)
    },
    reset () {
      enabled = false
      show($('keys'), false)
      $('key-list').replaceChildren()
      setText($('key-secret-value'), '')
      show($('key-secret'), false)
    }
  }
}
