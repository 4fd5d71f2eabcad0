// The account's answers to a contact's status (POST/DELETE …/like, POST …/reply): a Like / Unlike toggle, a
// reply box, and what was sent (when it was liked, the replies so far). Each reaches the poster at once, so
// nothing is sent without a press; the list shows only what the platform acknowledged.
import { h, setText, show, formatAgo } from './dom.js'

/** what the account sent, in a line */
export function answersText (s) {
  const parts = []
  if (s.likedAt !== null && s.likedAt !== undefined) parts.push(`You liked it ${s.likeEmoji ?? ''} ${formatAgo(s.likedAt)}`.replace(/\s+/g, ' '))
  const n = s.replies?.length ?? 0
  if (n > 0) parts.push(`${n} ${n === 1 ? 'reply' : 'replies'} sent`)
  return parts.join(' · ')
}

/**
 * The controls for status `s` of session `sessionId`; `changed(s)` gets the status as it is after each answer.
 * @param {{ api: any, describe: (err: unknown) => string, toast: (message: string) => void,
 *           busy: (button: HTMLElement, work: () => Promise<unknown>) => Promise<unknown> }} deps
 */
export function answerControls ({ api, describe, busy, toast }, sessionId, s, changed) {
  let current = { ...s, replies: [...(s.replies ?? [])] }
  const summary = h('p', { class: 'muted contact-status-answers', text: answersText(current) })
  const replyList = h('ul', { class: 'contact-status-replies' })
  const like = h('button', { type: 'button', class: 'button-quiet', text: '' })
  const input = h('input', { type: 'text', maxlength: '4096', placeholder: 'Reply…', 'aria-label': 'Reply to this status' })
  const send = h('button', { type: 'button', class: 'button-quiet', text: 'Reply' })
  const form = h('div', { class: 'row contact-status-reply' }, input, send)

  function render () {
    setText(like, current.likedAt === null ? 'Like 💚' : 'Unlike')
    setText(summary, answersText(current))
    replyList.replaceChildren(...current.replies.map((r) => h('li', { class: 'muted', text: `You: ${r.text}` })))
    show(replyList, current.replies.length > 0)
  }

  like.addEventListener('click', () => {
    void busy(like, async () => {
      try {
        const r = current.likedAt === null ? await api.likeContactStatus(sessionId, s.id) : await api.unlikeContactStatus(sessionId, s.id)
        current = { ...current, likedAt: r.likedAt, likeEmoji: r.likeEmoji }
        render()
        changed(current)
      } catch (err) { toast(describe(err)) }
    })
  })
  const reply = () => {
    const text = input.value.trim()
    if (text === '') return
    void busy(send, async () => {
      try {
        const r = await api.replyToContactStatus(sessionId, s.id, text)
        current = { ...current, replies: [...current.replies, { messageId: r.messageId, text, sentAt: r.sentAt }] }
        input.value = ''
        render()
        changed(current)
      } catch (err) { toast(describe(err)) }
    })
  }
  send.addEventListener('click', reply)
  input.addEventListener('keydown', (e) => { if (e.key === 'Enter') { e.preventDefault(); reply() } })
  render()
  return { like, summary, replyList, form }
}
