// Small DOM and formatting helpers. Text from the API only ever reaches the page as text nodes or
// attribute values set through the DOM: never as markup.

/**
 * Creates an element. `props`: `class`, `text`, `dataset`, `on<event>` listeners, boolean or string
 * attributes (false/null/undefined are left out). Children: nodes or strings (strings become text nodes).
 */
export function h (tag, props = {}, ...children) {
  const el = document.createElement(tag)
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue
    if (key === 'class') el.className = value
    else if (key === 'text') el.textContent = String(value)
    else if (key === 'dataset') Object.assign(el.dataset, value)
    else if (key.startsWith('on') && typeof value === 'function') el.addEventListener(key.slice(2), value)
    else el.setAttribute(key, value === true ? '' : String(value))
  }
  el.append(...children.flat().filter((c) => c !== null && c !== undefined && c !== false))
  return el
}

/** Sets text only when it changed (keeps screen readers' live regions quiet otherwise). */
export function setText (el, text) {
  const value = text ?? ''
  if (el.textContent !== value) el.textContent = value
}

export function show (el, visible) {
  el.hidden = !visible
}

/** `+15551234567` for stored digits; empty for none. */
export function phone (digits) {
  return typeof digits === 'string' && digits !== '' ? `+${digits}` : ''
}

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' })
const timeOnly = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' })

export function formatDateTime (iso) {
  const d = new Date(iso)
  return Number.isNaN(d.getTime()) ? '' : dateTime.format(d)
}

/** Time of day for today's dates, date and time otherwise. */
export function formatWhen (iso) {
  const d = new Date(iso)
  if (Number.isNaN(d.getTime())) return ''
  const now = new Date()
  return d.toDateString() === now.toDateString() ? timeOnly.format(d) : dateTime.format(d)
}

const relative = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' })

/** "5 minutes ago", "yesterday". */
export function formatAgo (iso, now = Date.now()) {
  const t = new Date(iso).getTime()
  if (Number.isNaN(t)) return ''
  const seconds = Math.round((t - now) / 1000)
  const abs = Math.abs(seconds)
  if (abs < 45) return relative.format(0, 'second')
  if (abs < 2700) return relative.format(Math.round(seconds / 60), 'minute')
  if (abs < 79200) return relative.format(Math.round(seconds / 3600), 'hour')
  return relative.format(Math.round(seconds / 86400), 'day')
}

export function formatBytes (bytes) {
  if (typeof bytes !== 'number' || !Number.isFinite(bytes)) return '–'
  const units = ['B', 'KB', 'MB', 'GB', 'TB']
  let value = bytes
  let i = 0
  while (value >= 1024 && i < units.length - 1) { value /= 1024; i++ }
  return `${i === 0 ? value : value.toFixed(value < 10 ? 1 : 0)} ${units[i]}`
}

export function formatDuration (seconds) {
  if (typeof seconds !== 'number' || !Number.isFinite(seconds)) return '–'
  const s = Math.floor(seconds)
  const d = Math.floor(s / 86400)
  const hours = Math.floor((s % 86400) / 3600)
  const m = Math.floor((s % 3600) / 60)
  if (d > 0) return `${d} d ${hours} h`
  if (hours > 0) return `${hours} h ${m} min`
  if (m > 0) return `${m} min`
  return `${s} s`
}

export function plural (n, one, many = one + 's') {
  return `${n} ${n === 1 ? one : many}`
}

/** Digits of a phone number with country code, as the API takes them. */
export const PHONE = /^[0-9]{10,15}$/

/** "+44 7700-900 123" → "447700900123" (spaces, dashes, dots, brackets and a leading plus dropped) */
export const digitsOf = (raw) => raw.trim().replace(/[\s\-().]/g, '').replace(/^\+/, '')

/**
 * Splits a box of numbers (one a line, or comma- or semicolon-separated) into digits, repeats dropped;
 * returns { numbers } or { error }. `lids`: a contact's LID (`…@lid`) is kept as written.
 */
export function parseNumbers (raw, { lids = false } = {}) {
  const numbers = []
  for (const part of raw.split(/[,;\n]+/)) {
    const trimmed = part.trim()
    if (trimmed === '') continue
    const entry = lids && /^[0-9]{1,20}@lid$/.test(trimmed) ? trimmed : digitsOf(trimmed)
    if (!entry.endsWith('@lid') && !PHONE.test(entry)) return { error: `“${trimmed}” is not a phone number: use 10 to 15 digits with country code.` }
    if (!numbers.includes(entry)) numbers.push(entry)
  }
  return { numbers }
}

/**
 * Shows an API error next to the field it names. `fields`: [path, element] pairs such as
 * ['body.repeat.until', el]; the longest path the message names wins (`body.repeat.until must …` goes to
 * until's element, `body.repeat allows no run` to repeat's). Returns the element used (`fallback` when the
 * message names none of them).
 */
export function showFieldError (message, fields, fallback) {
  const named = [...message.matchAll(/\bbody\.[A-Za-z.]+/g)].map((m) => m[0].replace(/\.$/, ''))
  let best = null
  for (const [path, el] of fields) {
    if (named.some((n) => n === path || n.startsWith(path + '.')) && (best === null || path.length > best[0].length)) best = [path, el]
  }
  const el = best === null ? fallback : best[1]
  setText(el, message)
  return el
}
