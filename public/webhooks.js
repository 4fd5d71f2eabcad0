// The Webhooks panel: endpoints that receive the events by HTTP, their signing secret (shown once), and
// their recent deliveries. Like the rest of the page, only the public REST API.
import { h, setText, show, formatWhen, formatDateTime } from './dom.js'

/** The socket.io events an endpoint can subscribe to (the API refuses any other name). */
const EVENT_NAMES = [
  'status-sent', 'status-viewers-update', 'status-viewers-added', 'status-send-progress', 'status-reaction', 'status-reply', 'status-deleted',
  'statuses-updated', 'contact-status', 'scheduled-status-fired', 'scheduled-status-failed',
  'session-created', 'session-deleted', 'connection-status', 'pairing-code', 'pairing-code-error', 'qr-code', 'qr-code-error'
]
const DELIVERY_LABELS = { pending: 'Pending', sending: 'Sending', succeeded: 'Delivered', failed: 'Failed' }
/** events refresh open delivery lists at most this often (the API's rate limit is per client) */
const REFRESH_GAP_MS = 5000

const $ = (id) => document.getElementById(id)

/**
 * @param {{ api: any, describe: (err: unknown) => string, busy: (button: HTMLElement, work: () => Promise<unknown>) => Promise<unknown>,
 *           confirmAction: (o: { title: string, text: string, ok: string }) => Promise<boolean>, toast: (message: string) => void }} deps
 */
export function createWebhooksPanel ({ api, describe, busy, confirmAction, toast }) {
  /** id → webhook (GET /api/webhooks shape) */
  const hooks = new Map()
  /** id → card { el, update, loadDeliveries, open } */
  const cards = new Map()
  let refreshTimer = 0
  let lastRefresh = 0

  // create form ------------------------------------------------------------------------------------

  const eventList = $('webhook-event-list')
  eventList.replaceChildren(...EVENT_NAMES.map((name) => h('label', { class: 'radio' },
    h('input', { type: 'checkbox', name: 'events', value: name }), h('code', { text: name }))))
  $('webhook-all-events').addEventListener('change', (e) => { show(eventList, !e.currentTarget.checked) })

  $('webhook-form').addEventListener('submit', (e) => {
    e.preventDefault()
    const errorEl = $('webhook-form-error')
    setText(errorEl, '')
    const url = $('webhook-url').value.trim()
    if (!/^https?:\/\/\S+$/i.test(url)) { setText(errorEl, 'Enter a full http:// or https:// address.'); $('webhook-url').focus(); return }
    const body = { url }
    if (!$('webhook-all-events').checked) {
      const events = [...eventList.querySelectorAll('input:checked')].map((i) => i.value)
      if (events.length === 0) { setText(errorEl, 'Choose at least one event, or All events.'); eventList.querySelector('input')?.focus(); return }
      body.events = events
    }
    const sessionId = $('webhook-session').value
    if (sessionId !== '') body.sessionId = sessionId
    const description = $('webhook-description').value.trim()
    if (description !== '') body.description = description
    void busy($('webhook-submit'), async () => {
      try {
        const created = await api.createWebhook(body)
        $('webhook-form').reset()
        show(eventList, false)
        $('webhook-create-details').open = false
        const { secret, ...hook } = created
        hooks.set(hook.id, hook)
        render()
        showSecret(hook, secret)
      } catch (err) {
        setText(errorEl, describe(err))
      }
    })
  })

  // the secret, once --------------------------------------------------------------------------------

  function showSecret (hook, secret) {
    setText($('webhook-secret-url'), hook.url)
    setText($('webhook-secret-value'), secret)
    show($('webhook-secret'), true)
    $('webhook-secret-copy').focus()
  }
  $('webhook-secret-copy').addEventListener('click', () => {
    const value = $('webhook-secret-value').textContent ?? ''
    // no clipboard access (plain http on another host): select it for the user to copy
    const selectIt = () => { window.getSelection()?.selectAllChildren($('webhook-secret-value')) }
    const clipboard = window.navigator.clipboard
    if (clipboard === undefined) { selectIt(); return }
    clipboard.writeText(value).then(() => { toast('Secret copied.') }, selectIt)
  })
  $('webhook-secret-done').addEventListener('click', () => {
    setText($('webhook-secret-value'), '')
    show($('webhook-secret'), false)
    $('webhooks-title').focus()
  })

  // list --------------------------------------------------------------------------------------------

  async function load () {
    try {
      const list = await api.webhooks()
      setText($('webhooks-error'), '')
      hooks.clear()
      for (const hook of list) hooks.set(hook.id, hook)
      render()
      await Promise.all([...cards.values()].filter((c) => c.open()).map((c) => c.loadDeliveries()))
    } catch (err) {
      setText($('webhooks-error'), describe(err))
    }
  }

  function render () {
    const list = $('webhook-list')
    for (const [id, card] of cards) if (!hooks.has(id)) { card.el.remove(); cards.delete(id) }
    ;[...hooks.values()].forEach((hook, i) => {
      let card = cards.get(hook.id)
      if (card === undefined) { card = webhookCard(hook.id); cards.set(hook.id, card) }
      card.update(hook)
      if (list.children[i] !== card.el) list.insertBefore(card.el, list.children[i] ?? null)
    })
    show($('webhooks-empty'), hooks.size === 0)
  }

  function webhookCard (id) {
    const url = h('span', { class: 'webhook-url' })
    const badge = h('span', { class: 'badge' })
    const meta = h('p', { class: 'session-meta' })
    const reason = h('p', { class: 'form-error' })
    const toggleBtn = h('button', { type: 'button', class: 'button-quiet', onclick: () => { void toggle() } })
    const deliveriesBtn = h('button', { type: 'button', class: 'button-quiet', text: 'Deliveries', 'aria-expanded': 'false', onclick: () => { void toggleDeliveries() } })
    const rotateBtn = h('button', { type: 'button', class: 'button-quiet', text: 'New secret', onclick: () => { void rotate() } })
    const deleteBtn = h('button', { type: 'button', class: 'button-danger-quiet', text: 'Delete', onclick: () => { void remove() } })
    const message = h('p', { class: 'card-message', role: 'status' })
    const rows = h('tbody')
    const table = h('table', { class: 'viewers deliveries' },
      h('thead', {}, h('tr', {}, ...['Event', 'State', 'Attempts', 'Last answer', 'When', ''].map((t) => h('th', { scope: 'col', text: t })))), rows)
    const empty = h('p', { class: 'empty', text: 'No deliveries yet.', hidden: true })
    const deliveriesError = h('p', { class: 'form-error', role: 'alert' })
    const deliveries = h('div', { class: 'deliveries-box', hidden: true }, table, empty, deliveriesError)
    const el = h('li', { class: 'session-card webhook-card', dataset: { webhookId: id } },
      h('div', { class: 'session-head' }, url, badge), meta, reason,
      h('div', { class: 'session-actions' }, toggleBtn, deliveriesBtn, rotateBtn, deleteBtn), message, deliveries)

    const current = () => hooks.get(id)

    function update (hook) {
      el.dataset.state = hook.enabled ? 'open' : 'logged-out'
      setText(url, hook.url)
      setText(badge, hook.enabled ? 'Enabled' : 'Disabled')
      badge.dataset.state = el.dataset.state
      const events = hook.events === null ? 'all events' : hook.events.join(', ')
      setText(meta, [events, hook.sessionId === null ? 'every session' : `session ${hook.sessionId}`, hook.description].filter(Boolean).join(' · '))
      setText(reason, hook.disabledReason ?? '')
      setText(toggleBtn, hook.enabled ? 'Disable' : 'Enable')
    }

    async function toggle () {
      const hook = current()
      if (hook === undefined) return
      await busy(toggleBtn, async () => {
        try {
          const updated = await api.updateWebhook(id, { enabled: !hook.enabled })
          hooks.set(id, updated)
          update(updated)
          setText(message, updated.enabled ? 'Enabled: waiting deliveries go out now.' : 'Disabled: new events are not queued for it.')
        } catch (err) { setText(message, describe(err)) }
      })
    }

    async function rotate () {
      const ok = await confirmAction({ title: 'Replace the signing secret?', text: 'Deliveries are signed with the new secret from now on; your receiver must use it.', ok: 'New secret' })
      if (!ok) { rotateBtn.focus(); return }
      await busy(rotateBtn, async () => {
        try {
          const { secret, ...hook } = await api.rotateWebhookSecret(id)
          hooks.set(id, hook)
          showSecret(hook, secret)
        } catch (err) { setText(message, describe(err)) }
      })
    }

    async function remove () {
      const ok = await confirmAction({ title: 'Delete this webhook?', text: 'It stops receiving events, and its delivery history is removed.', ok: 'Delete' })
      if (!ok) { deleteBtn.focus(); return }
      await busy(deleteBtn, async () => {
        try {
          await api.deleteWebhook(id)
          hooks.delete(id)
          render()
          toast('Webhook deleted.')
          $('webhooks-title').focus()
        } catch (err) { setText(message, describe(err)) }
      })
    }

    const isOpen = () => !deliveries.hidden

    async function toggleDeliveries () {
      const open = !isOpen()
      show(deliveries, open)
      deliveriesBtn.setAttribute('aria-expanded', String(open))
      if (open) await loadDeliveries()
    }

    async function loadDeliveries () {
      try {
        const page = await api.webhookDeliveries(id, 10)
        setText(deliveriesError, '')
        rows.replaceChildren(...page.deliveries.map(deliveryRow))
        show(table, page.deliveries.length > 0)
        show(empty, page.deliveries.length === 0)
      } catch (err) {
        setText(deliveriesError, describe(err))
      }
    }

    function deliveryRow (d) {
      const when = d.status === 'pending' && d.nextAttemptAt !== null ? `next ${formatWhen(d.nextAttemptAt)}` : formatWhen(d.completedAt ?? d.createdAt)
      const answer = d.lastStatusCode !== null ? `HTTP ${d.lastStatusCode}` : (d.lastError ?? '–')
      const retry = d.status === 'failed' || d.status === 'succeeded'
        ? h('button', { type: 'button', class: 'button-quiet', text: d.status === 'failed' ? 'Retry' : 'Send again', onclick: (e) => { void retryDelivery(d, e.currentTarget) } })
        : null
      return h('tr', { dataset: { status: d.status } },
        h('td', {}, h('code', { text: d.eventType })),
        h('td', {}, h('span', { class: 'delivery-state', dataset: { status: d.status }, text: DELIVERY_LABELS[d.status] ?? d.status })),
        h('td', { text: String(d.attempts) }),
        h('td', { title: d.lastError ?? '', text: answer }),
        h('td', {}, h('time', { datetime: d.createdAt, title: `created ${formatDateTime(d.createdAt)}`, text: when })),
        h('td', {}, retry))
    }

    async function retryDelivery (d, button) {
      await busy(button, async () => {
        try {
          await api.retryWebhookDelivery(id, d.id)
          setText(message, `Delivery ${d.id} (${d.eventType}) is being sent again.`)
          await loadDeliveries()
        } catch (err) { setText(message, describe(err)) }
      })
    }

    return { el, update, loadDeliveries, open: isOpen }
  }

  $('webhooks-refresh').addEventListener('click', (e) => { void busy(e.currentTarget, load) })

  return {
    load,
    /** an event went out: open delivery lists are read again, at most every REFRESH_GAP_MS */
    onEvent () {
      if (refreshTimer !== 0 || ![...cards.values()].some((c) => c.open())) return
      const delay = Math.max(1000, lastRefresh + REFRESH_GAP_MS - Date.now())
      refreshTimer = window.setTimeout(() => {
        refreshTimer = 0
        lastRefresh = Date.now()
        for (const c of cards.values()) if (c.open()) void c.loadDeliveries()
      }, delay)
    },
    /** the session filter offers the sessions the page knows */
    setSessions (sessions) {
      const select = $('webhook-session')
      const chosen = select.value
      select.replaceChildren(h('option', { value: '', text: 'Every session' }),
        ...sessions.map((s) => h('option', { value: s.sessionId, text: `${s.sessionName} (${s.sessionId})` })))
      select.value = sessions.some((s) => s.sessionId === chosen) ? chosen : ''
    },
    /** the key was dropped: forget what was read with it */
    reset () {
      hooks.clear()
      render()
      setText($('webhook-secret-value'), '')
      show($('webhook-secret'), false)
    }
  }
}
