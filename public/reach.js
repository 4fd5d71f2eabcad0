// A status's reach: views against recipients, likes and replies, and the chart of views over time.
// The chart is a few lines of hand-made SVG: one step line and two axes do not justify a chart library.
import { h, setText, show, phone, formatDateTime, formatWhen, formatDuration, plural } from './dom.js'

const SVG = 'http://www.w3.org/2000/svg'

/** An SVG element with its attributes and children (the Insights charts draw with it too). */
export function svg (tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG, tag)
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v))
  el.append(...children)
  return el
}

/** Recipients a status reached so far (a partial send: those that have it). */
function recipientsOf (s) {
  return s.state === 'sent' ? s.contactCount : s.sentCount
}

/** "3 of 5 reached · 60%" style text, and the share as a number (null when nobody has it yet). */
export function reachOf (s) {
  const recipients = recipientsOf(s)
  const viewers = s.viewerCount ?? 0
  const share = recipients > 0 ? Math.min(100, Math.round((viewers / recipients) * 100)) : null
  return { share, text: share === null ? 'no reach yet' : `${share}% reach` }
}

/** The reach line of a list item: share, likes and replies (kept next to the viewer count). */
export function renderReachLine (el, s) {
  const { share, text } = reachOf(s)
  const likes = s.reactionCount ?? 0
  const replies = s.replyCount ?? 0
  el.dataset.reactions = String(likes)
  el.dataset.replies = String(replies)
  el.replaceChildren(
    h('span', { class: 'reach-share', text, title: `${s.viewerCount ?? 0} of ${plural(recipientsOf(s), 'recipient')} viewed it` }),
    h('span', { class: 'reach-likes', text: `♥ ${likes}`, title: plural(likes, 'reaction'), 'aria-label': plural(likes, 'reaction') }),
    h('span', { class: 'reach-replies', text: `↩ ${replies}`, title: plural(replies, 'reply', 'replies'), 'aria-label': plural(replies, 'reply', 'replies') }))
  const bar = h('span', { class: 'reach-bar', 'aria-hidden': 'true' }, h('span', { class: 'reach-fill' }))
  bar.firstChild.style.width = `${share ?? 0}%`
  el.prepend(bar)
}

/**
 * Cumulative views (real viewers, first view each) from the posting time to now: a step line, the
 * number reached at the end, and the time axis from 0 to the elapsed time.
 */
export function viewsChart (postedAt, viewers, now = Date.now()) {
  const width = 560
  const height = 180
  const pad = { left: 36, right: 16, top: 14, bottom: 28 }
  const start = Date.parse(postedAt)
  const times = viewers.filter((v) => v.isReal).map((v) => Math.max(start, Date.parse(v.viewedAt))).sort((a, b) => a - b)
  const end = Math.max(now, times.at(-1) ?? start, start + 60_000)
  const top = Math.max(1, times.length)
  const x = (t) => pad.left + ((t - start) / (end - start)) * (width - pad.left - pad.right)
  const y = (n) => height - pad.bottom - (n / top) * (height - pad.top - pad.bottom)
  let d = `M${x(start).toFixed(1)},${y(0).toFixed(1)}`
  times.forEach((t, i) => { d += ` H${x(t).toFixed(1)} V${y(i + 1).toFixed(1)}` })
  d += ` H${x(end).toFixed(1)}`
  const label = `${plural(times.length, 'view')} in the ${formatDuration((end - start) / 1000)} since posting`
  return svg('svg', { viewBox: `0 0 ${width} ${height}`, class: 'views-chart', role: 'img', 'aria-label': label, 'data-views': times.length },
    svg('title', {}, label),
    svg('line', { x1: pad.left, y1: y(0), x2: width - pad.right, y2: y(0), class: 'axis' }),
    svg('line', { x1: pad.left, y1: pad.top, x2: pad.left, y2: y(0), class: 'axis' }),
    svg('text', { x: pad.left - 6, y: y(0) + 4, 'text-anchor': 'end', class: 'tick' }, '0'),
    svg('text', { x: pad.left - 6, y: y(top) + 4, 'text-anchor': 'end', class: 'tick' }, String(top)),
    svg('text', { x: pad.left, y: height - 8, class: 'tick' }, 'posted'),
    svg('text', { x: width - pad.right, y: height - 8, 'text-anchor': 'end', class: 'tick' }, `+${formatDuration((end - start) / 1000)}`),
    svg('path', { d, class: 'views-line' }),
    ...times.map((t, i) => svg('circle', { cx: x(t).toFixed(1), cy: y(i + 1).toFixed(1), r: 3, class: 'views-dot' }, svg('title', {}, `${i + 1} · ${formatDateTime(new Date(t).toISOString())}`))))
}

const who = (r) => r.number === null ? h('span', { title: r.jid, text: 'Number not known yet' }) : phone(r.number)
const when = (iso) => h('time', { datetime: iso, title: formatDateTime(iso), text: formatWhen(iso) })

/** The reactions list (emoji beside the number) and the replies list of the status dialog. */
export function renderAnswers ({ reactions, replies }, els) {
  setText(els.reactionsTitle, `Reactions (${reactions.length})`)
  els.reactions.replaceChildren(...[...reactions].sort((a, b) => a.reactedAt.localeCompare(b.reactedAt))
    .map((r) => h('li', { class: 'reaction' }, h('span', { class: 'emoji', text: r.emoji }), ' ', who(r), ' ', when(r.reactedAt))))
  show(els.reactionsEmpty, reactions.length === 0)
  setText(els.repliesTitle, `Replies (${replies.length})`)
  els.replies.replaceChildren(...[...replies].sort((a, b) => a.repliedAt.localeCompare(b.repliedAt))
    .map((r) => h('li', { class: 'reply' }, h('div', { class: 'reply-head' }, who(r), ' ', when(r.repliedAt)), h('p', { class: 'reply-text', text: r.text }))))
  show(els.repliesEmpty, replies.length === 0)
}

/** A status-reaction event applied to a list: the contact's entry replaced, or removed when taken back. */
export function applyReaction (reactions, e) {
  const rest = reactions.filter((r) => r.jid !== e.reaction.jid)
  return e.removed === true || e.reaction.emoji === '' ? rest : [...rest, e.reaction]
}

/** A status-reply event applied to a list (a redelivered one is not added twice). */
export function applyReply (replies, e) {
  return replies.some((r) => r.messageId === e.reply.messageId) ? replies : [...replies, e.reply]
}
