// The post form's mentions (send-status `mentions`, issue 39): at most five numbers, each told that the status
// mentions them (as WhatsApp Web tells them) and added to its audience so they can open it.
import { parseNumbers, setText } from './dom.js'

const $ = (id) => document.getElementById(id)
export const MAX_MENTIONS = 5

export function createMentionsField () {
  const input = $('post-mentions')
  const errorEl = $('post-mentions-error')
  return {
    errorEl,
    /** { mentions } (maybe empty), or { error, focus } */
    read () {
      setText(errorEl, '')
      const parsed = parseNumbers(input.value)
      if (parsed.error !== undefined) { setText(errorEl, parsed.error); return { error: parsed.error, focus: input } }
      if (parsed.numbers.length > MAX_MENTIONS) {
        const error = `Mention at most ${MAX_MENTIONS} people (${parsed.numbers.length} given).`
        setText(errorEl, error)
        return { error, focus: input }
      }
      return { mentions: parsed.numbers }
    },
    clear () { input.value = ''; setText(errorEl, '') }
  }
}
