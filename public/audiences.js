// Saved audiences of the selected session: named lists of numbers to post to again (create, list,
// delete). The audience picker offers them. The list is read when the panel is opened or the picker's
// Saved audience is chosen; a server without them (404 "Route not found") gets a note.
import { isMissingRoute } from './api.js'
import { h, setText, show, parseNumbers, formatDateTime, plural, showFieldError } from './dom.js'

const $ = (id) => document.getElementById(id)
/** pages read for the list (200 each): more audiences than this are not shown */
const MAX_PAGES = 25

/**
 * @param {{ api: any, describe: (err: unknown) => string, busy: (button: HTMLElement, work: () => Promise<unknown>) => Promise<unknown>,
 *           confirmAction: (o: { title: string, text: string, ok: string }) => Promise<boolean>, toast: (message: string) => void,
 *           onChange: (list: any[] | null) => void }} deps `onChange`: the list read, null when the server has none
 */
export function createSavedAudiencesPanel ({ api, describe, busy, confirmAction, toast, onChange }) {
  let sessionId = null
  let list = []
  /** the list was read (or is being read) for the session */
  let requested = false

  async function load () {
    const id = sessionId
    if (id === null) return
    requested = true
    try {
      const all = []
      let cursor = null
      for (let i = 0; i < MAX_PAGES; i++) {
        const page = await api.audiences(id, { cursor })
        all.push(...page.audiences)
        cursor = page.nextCursor ?? null
        if (cursor === null) break
      }
      if (id !== sessionId) return
      list = all
      setText($('audiences-error'), '')
      setAvailable(true)
      render()
      onChange(list)
    } catch (err) {
      if (id !== sessionId) return
      if (isMissingRoute(err)) { setAvailable(false); list = []; render(); onChange(null); return }
      setText($('audiences-error'), describe(err))
    }
  }

  function setAvailable (available) {
    show($('audiences-missing'), !available)
    show($('audience-create-details'), available)
  }

  function render () {
    $('audience-list').replaceChildren(...list.map(card))
    show($('audiences-empty'), list.length === 0 && $('audiences-missing').hidden)
  }

  function card (a) {
    const message = h('p', { class: 'card-message', role: 'status' })
    const deleteBtn = h('button', {
      type: 'button',
      class: 'button-danger-quiet',
      text: 'Delete',
      'aria-label': `Delete ${a.name}`,
      onclick: () => { void remove(a, deleteBtn, message) }
    })
    return h('li', { class: 'session-card audience-card', dataset: { audienceId: a.id } },
      h('div', { class: 'session-head' }, h('strong', { text: a.name }), h('span', { class: 'badge', text: plural(a.count, 'number') })),
      h('p', { class: 'session-meta', text: `${a.id} · made ${formatDateTime(a.createdAt)}${a.updatedAt !== a.createdAt ? ` · changed ${formatDateTime(a.updatedAt)}` : ''}` }),
      h('div', { class: 'session-actions' }, deleteBtn), message)
  }

  async function remove (a, button, message) {
    const ok = await confirmAction({ title: `Delete “${a.name}”?`, text: 'The list is removed. Statuses already sent to it keep the recipients they had; a schedule that names it fails its next run.', ok: 'Delete' })
    if (!ok) { button.focus(); return }
    await busy(button, async () => {
      try {
        await api.deleteAudience(sessionId, a.id)
        toast(`Audience “${a.name}” deleted.`)
        $('audiences-title').focus()
        await load()
      } catch (err) { setText(message, describe(err)) }
    })
  }

  $('audience-form').addEventListener('submit', (e) => {
    e.preventDefault()
    const id = sessionId
    if (id === null) return
    const nameError = $('audience-name-error')
    const numbersError = $('audience-numbers-error')
    for (const el of [nameError, numbersError, $('audience-form-error')]) setText(el, '')
    const name = $('audience-name').value.trim()
    if (name === '') { setText(nameError, 'Give the audience a name.'); $('audience-name').focus(); return }
    const parsed = parseNumbers($('audience-numbers').value)
    if (parsed.error !== undefined) { setText(numbersError, parsed.error); $('audience-numbers').focus(); return }
    if (parsed.numbers.length === 0) { setText(numbersError, 'Enter at least one number.'); $('audience-numbers').focus(); return }
    void busy($('audience-submit'), async () => {
      try {
        const created = await api.createAudience(id, { name, numbers: parsed.numbers })
        $('audience-form').reset()
        $('audience-create-details').open = false
        toast(`Audience “${name}” saved (${plural(parsed.numbers.length, 'number')}).`)
        await load()
        $('audience-list').querySelector(`[data-audience-id="${window.CSS.escape(created.id)}"] button`)?.focus()
      } catch (err) {
        const el = showFieldError(describe(err), [['body.name', nameError], ['body.numbers', numbersError]], $('audience-form-error'))
        if (el === nameError) $('audience-name').focus()
        else if (el === numbersError) $('audience-numbers').focus()
      }
    })
  })

  $('audiences-refresh').addEventListener('click', (e) => { void busy(e.currentTarget, load) })
  $('audiences-details').addEventListener('toggle', () => { if ($('audiences-details').open && !requested) void load() })

  return {
    /** reads the list again, if it was read for this session before */
    reload () { if (requested) void load() },
    /** reads the list once per session (the picker's Saved audience) */
    ensure () { if (!requested) void load() },
    setSession (id) {
      if (id === sessionId) return
      sessionId = id
      list = []
      requested = false
      render()
      setText($('audiences-error'), '')
      if (id !== null && $('audiences-details').open) void load()
    },
    reset () {
      sessionId = null
      list = []
      requested = false
      render()
    }
  }
}
