// Contacts' statuses of the selected session (GET …/contact-statuses: the last 24 hours, newest first, paged),
// kept current by the contact-status event. Listing them tells the posters nothing: the media is fetched only
// when "Show media" is pressed, and the one read receipt goes only when "Tell them I viewed it" is (the owner
// decides who learns they looked).
import { h, setText, show, formatAgo, formatBytes, formatDateTime, phone } from './dom.js'
import { answerControls } from './contact-status-answers.js'

const $ = (id) => document.getElementById(id)
const PAGE = 20
const TYPE_LABELS = { text: 'Text', image: 'Image', video: 'Video', audio: 'Voice', other: 'Other', undecryptable: 'Could not be read' }

/** who posted: their number when known, else their LID */
export function posterText (s) {
  return s.number !== null ? phone(s.number) : s.lid ?? s.jid
}

/** where a group status was posted (issue 39): its subject when known, else its JID */
export function groupText (s) {
  return s.groupJid ? ` in group ${s.groupSubject ?? s.groupJid}` : ''
}

/** what it says, in a line */
export function contactStatusSummary (s) {
  if (s.type === 'text') return s.text ?? ''
  if (s.type === 'undecryptable') return s.error ?? ''
  const media = [s.mediaType, s.mediaSize === null ? null : formatBytes(s.mediaSize)].filter((x) => x !== null).join(', ')
  return [s.caption, media === '' ? null : `(${media})`].filter((x) => x !== null && x !== '').join(' ')
}

/** a Blob as a data: URL */
function dataUrl (blob) {
  return new Promise((resolve, reject) => {
    const reader = new FileReader()
    reader.addEventListener('load', () => { resolve(String(reader.result)) })
    reader.addEventListener('error', () => { reject(reader.error ?? new Error('could not read the media')) })
    reader.readAsDataURL(blob)
  })
}

/**
 * @param {{ api: any, describe: (err: unknown) => string, busy: (button: HTMLElement, work: () => Promise<unknown>) => Promise<unknown>,
 *           confirmAction: (o: { title: string, text: string, ok: string }) => Promise<boolean>, toast: (message: string) => void }} deps
 */
export function createContactStatusesPanel ({ api, describe, busy, confirmAction, toast }) {
  const list = $('contact-status-list')
  let sessionId = null
  let nextCursor = null
  /** id → status, as listed */
  const shown = new Map()
  /** object URLs of media shown, revoked when the list is left */
  const urls = []

  function item (s) {
    const facts = h('p', { class: 'muted', text: `${posterText(s)}${groupText(s)} · ${TYPE_LABELS[s.type] ?? s.type} · ${formatAgo(s.postedAt)}${s.mentionsMe ? ' · mentions you' : ''}` })
    facts.title = formatDateTime(s.postedAt)
    const body = h('p', { class: 'status-text', text: contactStatusSummary(s) })
    const mediaBox = h('div', { class: 'contact-status-media' })
    const viewed = h('span', { class: 'muted', text: s.viewedAt === null ? '' : `You told them you viewed it ${formatAgo(s.viewedAt)}` })
    const buttons = []
    if (s.mediaType !== null && s.type !== 'undecryptable') {
      const btn = h('button', { type: 'button', class: 'button-quiet', text: 'Show media' })
      btn.addEventListener('click', () => {
        void busy(btn, async () => {
          try {
            const blob = await api.contactStatusMedia(sessionId, s.id)
            // the page's content security policy shows images from data: URLs only; anything else is saved
            if (s.type === 'image') {
              mediaBox.replaceChildren(h('img', { src: await dataUrl(blob), alt: s.caption ?? 'status image' }))
            } else {
              const url = URL.createObjectURL(blob)
              urls.push(url)
              mediaBox.replaceChildren(h('a', { href: url, download: `${s.id}.${(s.mediaType ?? '').split('/')[1] ?? 'bin'}`, text: `Save the ${TYPE_LABELS[s.type]?.toLowerCase() ?? 'media'}` }))
            }
            show(btn, false)
          } catch (err) { toast(describe(err)) }
        })
      })
      buttons.push(btn)
    }
    if (s.viewedAt === null && s.type !== 'undecryptable') {
      const btn = h('button', { type: 'button', class: 'button-quiet', text: 'Tell them I viewed it' })
      btn.addEventListener('click', () => {
        void busy(btn, async () => {
          const ok = await confirmAction({ title: 'Send a view receipt?', text: `${posterText(s)} will see that you viewed this status.`, ok: 'Send' })
          if (!ok) return
          try {
            const r = await api.viewContactStatus(sessionId, s.id)
            shown.set(s.id, { ...s, viewedAt: r.viewedAt })
            setText(viewed, `You told them you viewed it ${formatAgo(r.viewedAt)}`)
            show(btn, false)
          } catch (err) { toast(describe(err)) }
        })
      })
      buttons.push(btn)
    }
    // like and reply (contact-status-answers.js): not for a status that could not be read
    const answers = s.type === 'undecryptable' ? null : answerControls({ api, describe, busy, toast }, sessionId, s, (now) => { shown.set(s.id, now) })
    if (answers !== null) buttons.push(answers.like)
    return h('li', { class: 'card contact-status', dataset: { id: s.id, type: s.type } }, facts, body, mediaBox,
      h('div', { class: 'row contact-status-actions' }, ...buttons, viewed),
      ...(answers === null ? [] : [answers.summary, answers.replyList, answers.form]))
  }

  function render () {
    show($('contact-statuses-empty'), shown.size === 0)
    show($('contact-statuses-more'), nextCursor !== null)
  }

  async function load (more = false) {
    if (sessionId === null) return
    const id = sessionId
    setText($('contact-statuses-error'), '')
    try {
      const page = await api.contactStatuses(id, { limit: PAGE, cursor: more ? nextCursor : null })
      if (id !== sessionId) return
      if (!more) { shown.clear(); list.replaceChildren() }
      for (const s of page.statuses) {
        if (shown.has(s.id)) continue
        shown.set(s.id, s)
        list.append(item(s))
      }
      nextCursor = page.nextCursor
      render()
    } catch (err) {
      if (id === sessionId) setText($('contact-statuses-error'), describe(err))
    }
  }

  function reset () {
    sessionId = null
    nextCursor = null
    shown.clear()
    list.replaceChildren()
    for (const url of urls.splice(0)) URL.revokeObjectURL(url)
    setText($('contact-statuses-error'), '')
  }

  $('contact-statuses-refresh').addEventListener('click', () => { void load() })
  $('contact-statuses-more').addEventListener('click', () => { void load(true) })

  return {
    /** the selected session (null: none); its list is read once per selection */
    setSession (id) {
      if (id === sessionId) return
      reset()
      sessionId = id
      if (id !== null) void load()
    },
    /** a contact-status event: a new one goes on top */
    onEvent (e) {
      if (e.sessionId !== sessionId || shown.has(e.status.id)) return
      shown.set(e.status.id, e.status)
      list.prepend(item(e.status))
      render()
    },
    load,
    reset
  }
}
