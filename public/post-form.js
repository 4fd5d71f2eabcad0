// The post form: text, media upload or URL, the audience, mentions, now or scheduled.
import { $, state, api, describe, busy } from './page.js'
import { setText, show, formatDateTime, showFieldError } from './dom.js'
import { picker, mentions, schedules } from './panels.js'
import { loadStatuses } from './statuses.js'
import { renderDetailHead } from './sessions.js'
import { scheduleOverview } from './overview.js'

function postType () {
  return $('post-form').elements.type.value
}

const MEDIA_FILE_LABELS = { image: 'Image file', video: 'Video file', audio: 'Audio file (OGG/Opus goes out as a voice note; MP3, M4A, AAC, WAV as audio)' }

function syncPostType () {
  const type = postType()
  show($('post-text'), type === 'text')
  const media = type === 'image' || type === 'video' || type === 'audio'
  show($('post-media'), media)
  show($('post-url'), type === 'url')
  // audio carries no caption on the platform
  show($('post-caption-field'), type !== 'text' && type !== 'audio')
  if (media) {
    setText($('post-file-label'), MEDIA_FILE_LABELS[type])
    const file = $('post-file')
    // .opus files often come without an audio/* type
    const accept = type === 'audio' ? 'audio/*,.opus' : `${type}/*`
    if (file.accept !== accept) { file.accept = accept; file.value = '' }
  }
  setText($('post-error'), '')
}
for (const radio of $('post-form').querySelectorAll('input[name="type"]')) radio.addEventListener('change', syncPostType)
syncPostType()

function syncPreview () {
  const text = $('post-text-input').value
  setText($('post-preview-text'), text.trim() === '' ? 'Your status text' : text)
  const preview = $('post-preview')
  preview.style.backgroundColor = $('post-bg').value
  preview.dataset.font = $('post-font').value
  preview.classList.toggle('placeholder', text.trim() === '')
}
for (const id of ['post-text-input', 'post-bg', 'post-font']) $(id).addEventListener('input', syncPreview)
syncPreview()

function setUploadProgress (fraction) {
  const pct = Math.round(fraction * 100)
  $('upload-progress').value = pct
  setText($('upload-label'), fraction >= 1 ? 'Uploaded' : `Uploading ${pct} %`)
}

$('post-form').addEventListener('submit', (e) => {
  e.preventDefault()
  const sessionId = state.selectedId
  if (sessionId === null) return
  const type = postType()
  const errorEl = $('post-error')
  setText(errorEl, '')
  setText($('post-result'), '')
  setText(picker.errorEl, '')
  schedules.clearErrors()

  const who = picker.read()
  if (who.error !== undefined) { setText(picker.errorEl, who.error); who.focus.focus(); return }
  const mentioned = mentions.read()
  if (mentioned.error !== undefined) { mentioned.focus.focus(); return }
  const later = schedules.isLater()
  const when = later ? schedules.readWhen() : null
  if (when !== null && when.error !== undefined) { when.focus.focus(); return }

  /** @type {Record<string, unknown>} */
  const body = { type, ...who.fields, ...(mentioned.mentions.length > 0 ? { mentions: mentioned.mentions } : {}) }
  const caption = $('post-caption').value.trim()
  if (type !== 'text' && type !== 'audio' && caption !== '') body.caption = caption

  let file = null
  if (type === 'text') {
    const text = $('post-text-input').value
    if (text.trim() === '') { setText(errorEl, 'Write the text of the status.'); $('post-text-input').focus(); return }
    body.content = text
    body.backgroundColor = $('post-bg').value.toUpperCase()
    body.font = Number($('post-font').value)
  } else if (type === 'url') {
    const url = $('post-url-input').value.trim()
    if (!/^https?:\/\/\S+$/i.test(url)) { setText(errorEl, 'Enter a full http:// or https:// link to the media.'); $('post-url-input').focus(); return }
    body.content = url
  } else {
    file = $('post-file').files?.[0] ?? null
    if (file === null) { setText(errorEl, `Choose ${type === 'image' ? 'an image' : type === 'video' ? 'a video' : 'an audio'} file to upload.`); $('post-file').focus(); return }
  }

  const submit = $('post-submit')
  state.sending = true
  $('post-form').setAttribute('aria-busy', 'true')
  void busy(submit, async () => {
    try {
      if (file !== null) {
        show($('upload-row'), true)
        setUploadProgress(0)
        try {
          body.content = await api.upload(type, file, setUploadProgress)
        } catch (err) {
          show($('upload-row'), false)
          throw err
        }
      }
      if (when !== null) {
        const created = await schedules.create(sessionId, body, when)
        setText($('post-result'), created.nextRunAt === null ? 'Scheduled.' : `Scheduled: the first run is ${formatDateTime(created.nextRunAt)} (schedule ${created.id}).`)
      } else {
        setText($('post-result'), 'Sending…')
        const r = await api.sendStatus(sessionId, body)
        setText($('post-result'), `${r.message} (status #${r.statusId}).`)
      }
      // keep type, colour, font, audience and timing for the next one
      $('post-text-input').value = ''
      $('post-caption').value = ''
      $('post-url-input').value = ''
      $('post-file').value = ''
      mentions.clear()
      show($('upload-row'), false)
      syncPreview()
      if (sessionId === state.selectedId && when === null) await loadStatuses()
      scheduleOverview()
    } catch (err) {
      setText($('post-result'), '')
      // an error naming a field is shown next to it
      if (when !== null) schedules.showError(describe(err), errorEl)?.focus()
      else showFieldError(describe(err), [['body.targetNumbers', picker.errorEl], ['body.audience', picker.errorEl], ['body.mentions', mentions.errorEl]], errorEl)
    } finally {
      state.sending = false
      $('post-form').removeAttribute('aria-busy')
      renderDetailHead()
    }
  })
})
