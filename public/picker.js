// The audience picker in the post form: who a status goes to. A list of numbers (sent as `targetNumbers`,
// as always), the phone's contacts except some, whatever the phone's own status privacy says, or a saved
// audience (send-status `audience`). The schedule form posts the same body, so it uses the same choice.
// What an option needs is read when it is chosen (no requests for options nobody uses); an option whose
// endpoint this server does not have (404 "Route not found") is then disabled with a note.
import { isMissingRoute } from './api.js'
import { h, setText, show, phone, parseNumbers, formatDateTime, plural } from './dom.js'

const $ = (id) => document.getElementById(id)
const PAGE = 20
const SEARCH_DELAY_MS = 300
const MISSING = {
  contacts: 'Not on this server: it keeps no list of the phone\'s contacts (GET …/contacts answers 404).',
  phone: 'Not on this server: it cannot read the phone\'s status privacy (GET …/status-privacy answers 404).',
  saved: 'Not on this server: it has no saved audiences (GET …/audiences answers 404).'
}

/** one line for the phone's status privacy (GET …/status-privacy: { mode, numbers, updatedAt }) */
export function privacyText (p) {
  if (p.mode === null || p.mode === undefined) return 'The phone\'s status privacy is not known yet: the service reads it when the session connects.'
  const count = Array.isArray(p.numbers) ? p.numbers.length : 0
  const listed = count === 0 ? '' : `: ${recipientList(p.numbers.slice(0, 5))}${count > 5 ? ` and ${count - 5} more` : ''}`
  const mode = p.mode === 'contacts' ? 'My contacts: every saved contact sees it'
    : p.mode === 'denylist' ? `My contacts except ${plural(count, 'number')}${listed}`
      : p.mode === 'allowlist' ? `Only share with ${plural(count, 'number')}${listed}`
        : `Mode ${String(p.mode)}`
  return p.updatedAt ? `${mode} (as the phone said ${formatDateTime(p.updatedAt)}).` : `${mode}.`
}

/** How a sent status's recipients were chosen (its `audience` snapshot), in words. */
export function snapshotText (a) {
  if (a.type === 'saved') return `Saved audience “${a.name ?? a.audienceId}”`
  if (a.type === 'contacts') return a.except?.length ? `My contacts except ${plural(a.except.length, 'number')}` : 'All my contacts'
  if (a.type === 'phone') {
    const mode = a.mode === 'contacts' ? 'my contacts' : a.mode === 'denylist' ? `my contacts except ${plural(a.except?.length ?? 0, 'number')}` : a.mode === 'allowlist' ? 'only share with…' : a.mode
    return `As the phone's privacy (${mode})`
  }
  return 'A list of numbers'
}

/** Recipients (digits, or `…@lid` for a contact known by its LID only) for reading; the first 50. */
export function recipientList (recipients) {
  const shown = recipients.slice(0, 50).map((r) => r.endsWith('@lid') ? r : phone(r)).join(', ')
  return recipients.length > 50 ? `${shown} and ${recipients.length - 50} more` : shown
}

/** @param {{ api: any, describe: (err: unknown) => string, loadSaved: () => void }} deps `loadSaved`: the saved audiences panel reads its list */
export function createAudiencePicker ({ api, describe, loadSaved }) {
  let sessionId = null
  /** option → why it is off, or null */
  const missing = { contacts: null, phone: null, saved: null }
  /** saved audiences of the session (summaries), for the select and for naming them in schedules */
  let saved = []
  let nextCursor = null
  /** the contacts list was read for the session */
  let contactsRead = false
  let searchTimer = 0
  /** answers to older searches are dropped */
  let searchSeq = 0
  /** entry (number or `…@lid`) → its Leave out button */
  const resultButtons = new Map()

  const form = $('post-form')
  const type = () => form.elements.audience.value
  const radio = (value) => form.querySelector(`input[name="audience"][value="${value}"]`)

  function sync () {
    const t = type()
    show($('aud-list'), t === 'list')
    show($('aud-contacts'), t === 'contacts')
    show($('aud-phone'), t === 'phone')
    show($('aud-saved'), t === 'saved')
    setText($('aud-error'), '')
    fetchFor(t)
  }
  for (const r of form.querySelectorAll('input[name="audience"]')) r.addEventListener('change', sync)

  /** reads what the chosen option shows, for the selected session */
  function fetchFor (t) {
    if (sessionId === null) return
    if (t === 'contacts' && !contactsRead) void searchContacts()
    else if (t === 'phone') void loadPrivacy()
    else if (t === 'saved') loadSaved()
  }

  /** turns an option off (with its note) or on; a chosen option that goes off falls back to List */
  function setMissing (option, isMissing) {
    missing[option] = isMissing ? MISSING[option] : null
    radio(option).disabled = isMissing
    setText($(`aud-note-${option}`), missing[option] ?? '')
    show($(`aud-note-${option}`), isMissing)
    if (isMissing && type() === option) { radio('list').checked = true; sync() }
  }

  // contacts except ----------------------------------------------------------------------------------

  const exceptEntries = () => parseNumbers($('aud-except').value, { lids: true }).numbers ?? []

  function contactKey (c) {
    if (typeof c.number === 'string' && c.number !== '') return c.number
    if (typeof c.lid === 'string' && c.lid !== '') return c.lid.includes('@') ? c.lid : `${c.lid}@lid`
    return null
  }

  function syncLeaveOut () {
    const out = new Set(exceptEntries())
    for (const [key, button] of resultButtons) {
      const left = out.has(key)
      button.setAttribute('aria-pressed', String(left))
      setText(button, left ? 'Left out' : 'Leave out')
    }
  }
  $('aud-except').addEventListener('input', syncLeaveOut)

  function toggleLeaveOut (key) {
    const entries = exceptEntries()
    const next = entries.includes(key) ? entries.filter((e) => e !== key) : [...entries, key]
    $('aud-except').value = next.join('\n')
    syncLeaveOut()
  }

  function contactItem (c) {
    const key = contactKey(c)
    const name = typeof c.name === 'string' && c.name !== '' ? c.name : 'No name'
    const number = typeof c.number === 'string' && c.number !== '' ? phone(c.number) : 'known by LID only'
    const button = key === null
      ? null
      : h('button', { type: 'button', class: 'button-quiet', 'aria-pressed': 'false', 'aria-label': `Leave out ${name}`, text: 'Leave out', onclick: () => { toggleLeaveOut(key) } })
    if (button !== null) resultButtons.set(key, button)
    return h('li', { class: 'contact-result', dataset: { number: key ?? '' } },
      h('span', { class: 'contact-name', text: name }), h('span', { class: 'contact-number', text: number }), button)
  }

  async function searchContacts ({ more = false } = {}) {
    if (sessionId === null || missing.contacts !== null) return
    const id = sessionId
    const seq = ++searchSeq
    const search = $('aud-contact-search').value.trim()
    try {
      const page = await api.contacts(id, { search, limit: PAGE, cursor: more ? nextCursor : null })
      if (seq !== searchSeq || id !== sessionId) return
      contactsRead = true
      setMissing('contacts', false)
      const list = $('aud-contact-results')
      if (!more) { list.replaceChildren(); resultButtons.clear() }
      list.append(...page.contacts.map(contactItem))
      nextCursor = page.nextCursor ?? page.next ?? null
      show($('aud-contact-more'), nextCursor !== null)
      const shown = list.children.length
      setText($('aud-contact-count'), shown === 0
        ? (search === '' ? 'The phone has shared no contacts with this session yet.' : `No contact matches “${search}”.`)
        : `${plural(shown, 'contact')} shown${nextCursor !== null ? ' (more below)' : ''}.`)
      syncLeaveOut()
    } catch (err) {
      if (seq !== searchSeq || id !== sessionId) return
      if (isMissingRoute(err)) { setMissing('contacts', true); return }
      setText($('aud-contact-count'), describe(err))
    }
  }
  $('aud-contact-search').addEventListener('input', () => {
    window.clearTimeout(searchTimer)
    searchTimer = window.setTimeout(() => { void searchContacts() }, SEARCH_DELAY_MS)
  })
  $('aud-contact-more').addEventListener('click', () => { void searchContacts({ more: true }) })

  // the phone's privacy --------------------------------------------------------------------------------

  async function loadPrivacy () {
    if (sessionId === null) return
    const id = sessionId
    try {
      const p = await api.statusPrivacy(id)
      if (id !== sessionId) return
      setMissing('phone', false)
      setText($('aud-phone-mode'), privacyText(p))
    } catch (err) {
      if (id !== sessionId) return
      if (isMissingRoute(err)) { setMissing('phone', true); return }
      setText($('aud-phone-mode'), describe(err))
    }
  }
  $('aud-phone-refresh').addEventListener('click', () => { void loadPrivacy() })

  sync()

  // saved ----------------------------------------------------------------------------------------------

  function renderSaved () {
    const select = $('aud-saved-select')
    const chosen = select.value
    select.replaceChildren(
      h('option', { value: '', text: saved.length === 0 ? 'No saved audiences yet' : 'Choose one…' }),
      ...saved.map((a) => h('option', { value: a.id, text: `${a.name} (${plural(a.count, 'number')})` })))
    select.value = saved.some((a) => a.id === chosen) ? chosen : ''
  }

  return {
    /** the choice as send-status fields: { fields } or { error, focus } */
    read () {
      const t = type()
      if (t === 'list') {
        const r = parseNumbers($('post-recipients').value)
        if (r.error !== undefined) return { error: r.error, focus: $('post-recipients') }
        return { fields: r.numbers.length > 0 ? { targetNumbers: r.numbers.join(',') } : {} }
      }
      if (t === 'contacts') {
        const r = parseNumbers($('aud-except').value, { lids: true })
        if (r.error !== undefined) return { error: r.error, focus: $('aud-except') }
        return { fields: { audience: { type: 'contacts', except: r.numbers } } }
      }
      if (t === 'phone') return { fields: { audience: { type: 'phone' } } }
      const audienceId = $('aud-saved-select').value
      if (audienceId === '') return { error: 'Choose a saved audience (make one under Saved audiences).', focus: $('aud-saved-select') }
      return { fields: { audience: { type: 'saved', audienceId } } }
    },
    errorEl: $('aud-error'),
    /** who a send-status body (a schedule's) goes to, in words */
    describe (body) {
      const a = body.audience
      if (a === undefined || a === null) {
        const n = typeof body.targetNumbers === 'string' && body.targetNumbers !== '' ? body.targetNumbers.split(',').length : 0
        return n === 0 ? 'to your own number only' : `to ${plural(n, 'number')}`
      }
      if (a.type === 'list') return `to ${plural(a.numbers?.length ?? 0, 'number')}`
      if (a.type === 'contacts') return a.except?.length ? `to my contacts except ${plural(a.except.length, 'number')}` : 'to all my contacts'
      if (a.type === 'phone') return 'as the phone\'s status privacy says'
      const known = saved.find((s) => s.id === a.audienceId)
      return `to the saved audience ${known === undefined ? a.audienceId : `“${known.name}”`}`
    },
    /** the saved audiences panel read its list: null when the server has none */
    setSaved (list) {
      setMissing('saved', list === null)
      saved = list ?? []
      renderSaved()
    },
    /** a session was selected: read what its options need */
    setSession (id) {
      if (id === sessionId) return
      sessionId = id
      nextCursor = null
      contactsRead = false
      $('aud-contact-search').value = ''
      $('aud-contact-results').replaceChildren()
      resultButtons.clear()
      setText($('aud-contact-count'), '')
      setText($('aud-phone-mode'), '')
      setText($('aud-error'), '')
      fetchFor(type())
    },
    reset () {
      sessionId = null
      saved = []
      renderSaved()
    }
  }
}
