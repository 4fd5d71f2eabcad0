import assert from 'node:assert/strict'
import type { AddressInfo } from 'node:net'
import { test } from 'node:test'
import { enterKey, failedAt, findChromium, openBrowser, skipWithoutChromium } from './browser.js'
import { voiceOgg } from '../uploads/fixtures.js'
import { mediaTrusted, startStack } from '../stack.js'

// The dashboard's post form offers audio (issue 31): a file chosen under "Audio" is uploaded through
// POST /api/upload-audio and posted as type audio; an OGG/Opus file reaches the recipients as a voice note.

const OWNER = '15550303001'
const CONTACT = '15550303011'

test('dashboard: an audio file posted from the form reaches the recipient as a voice note', {
  skip: skipWithoutChromium || (!mediaTrusted() && 'needs NODE_EXTRA_CA_CERTS=test/.certs/cert.pem (npm test sets it)'),
  timeout: 90_000
}, async (t) => {
  const chromiumPath = findChromium()
  if (chromiumPath === undefined) assert.fail('Chromium not found')
  const s = await startStack(t)
  await s.link('phone1', OWNER)
  const { port } = s.app.server.address() as AddressInfo
  const { page, errors } = await openBrowser(t, chromiumPath)
  let step = 'open the page'
  try {
    await page.goto(`http://127.0.0.1:${port}/`)
    await enterKey(page)
    await page.locator('#post-fields:not([disabled])').waitFor()

    step = 'choose Audio: a file field for audio, no caption'
    const form = page.locator('#post-form')
    await form.getByRole('radio', { name: 'Audio' }).check()
    const file = form.locator('#post-file')
    assert.equal(await file.getAttribute('accept'), 'audio/*,.opus')
    assert.match(await form.locator('#post-file-label').textContent() ?? '', /^Audio file/)
    assert.ok(await form.locator('#post-caption-field').isHidden(), 'audio carries no caption')

    step = 'post it'
    await file.setInputFiles({ name: 'hello.ogg', mimeType: 'audio/ogg', buffer: voiceOgg() })
    await form.getByLabel('Recipients').fill(CONTACT)
    await form.getByRole('button', { name: 'Post status' }).click()
    const result = form.locator('#post-result')
    await result.filter({ hasText: /\(status #\d+\)/ }).waitFor()
    assert.match(await result.textContent() ?? '', /Status sent to 1 contact/)

    step = 'the recipient decrypts a voice note; the list shows an audio status'
    const record = await s.emu.waitForStatus((r) => r.from === OWNER && r.decrypted && r.type === 'audio', 15_000)
    assert.deepEqual([record.media?.ptt, record.media?.mimetype, record.media?.seconds, record.media?.verified], [true, 'audio/ogg; codecs=opus', 3, true])
    assert.ok(record.recipients.includes(CONTACT))
    await page.locator('#status-list .status-item').filter({ hasText: 'hello.ogg' }).waitFor()
    assert.deepEqual(errors, [])
  } catch (err) {
    await failedAt(page, 'dashboard-audio', step, err)
  }
})
