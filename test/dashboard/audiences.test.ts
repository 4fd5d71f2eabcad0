import assert from 'node:assert/strict'
import type { AddressInfo } from 'node:net'
import { test } from 'node:test'
import type { Page } from 'playwright-core'
import { build, waitFor } from '../helper.js'
import { startStack, type Stack } from '../stack.js'
import { enterKey, findChromium, openBrowser, failedAt, skipWithoutChromium } from './browser.js'
import { insertSession } from '../support/sessions.js'

// The audience picker in the dashboard (issue 24), in headless Chromium against the real service, real
// Baileys and the emulator: a saved audience made in its panel, chosen in the post form, reaches exactly
// its numbers (status_setting allowlist, the snapshot kept) and names itself in a schedule; an option
// whose endpoint the server lacks is disabled with a note.

const chromiumPath = findChromium()
const OWN = '15550505001'
const A = '15550505011'
const B = '15550505012'
const C = '15550505013'
const SID = 'picker'

const baseUrl = (s: { app: { server: { address: () => unknown } } }): string => `http://127.0.0.1:${(s.app.server.address() as AddressInfo).port}/`

async function open (t: Parameters<typeof startStack>[0], url: string): Promise<{ page: Page, errors: string[] }> {
  if (chromiumPath === undefined) assert.fail('Chromium not found: install the Debian package "chromium" or set CHROMIUM_PATH')
  const browser = await openBrowser(t, chromiumPath)
  await browser.page.goto(url)
  await enterKey(browser.page)
  await browser.page.locator('#live[data-state="on"]').waitFor()
  return browser
}

type SentAudience = { type: string, name: string | null, statusSetting: string, recipients: string[] } | null
async function sentAudience (s: Stack, text: string): Promise<{ audience: SentAudience }> {
  const res = await s.api({ url: `/api/sessions/${SID}/sent-statuses` })
  const item = res.json<{ data: Array<{ content: string, audience: SentAudience }> }>().data.find((x) => x.content === text)
  assert.ok(item !== undefined, `“${text}” is listed`)
  return item
}

test('dashboard audience picker: a saved audience made in its panel, posted to and scheduled with', { skip: skipWithoutChromium, timeout: 120_000 }, async (t) => {
  const s = await startStack(t, { RATE_LIMIT_MAX: '1000000' }, { autoCreateContacts: false })
  for (const number of [A, B, C]) s.emu.addContact({ number })
  await s.link(SID, OWN)
  const { page, errors } = await open(t, baseUrl(s))
  const form = page.locator('#post-form')
  let step = 'make a saved audience'
  try {
    await page.locator('#post-fields:not([disabled])').waitFor()
    await page.locator('#audiences-details > summary').click()
    await page.locator('#audiences-empty').waitFor({ state: 'visible' })
    await page.locator('#audience-create-details > summary').click()
    const panel = page.locator('#audience-form')
    await panel.getByRole('button', { name: 'Save audience' }).click()
    await page.locator('#audience-name-error').filter({ hasText: 'Give the audience a name.' }).waitFor()
    await panel.getByLabel('Name').fill('VIPs')
    await panel.getByLabel('Numbers').fill(`+${A}\n${B}, 123`)
    await panel.getByRole('button', { name: 'Save audience' }).click()
    await page.locator('#audience-numbers-error').filter({ hasText: '“123” is not a phone number' }).waitFor()
    await panel.getByLabel('Numbers').fill(`+${A}\n${B}`)
    await panel.getByRole('button', { name: 'Save audience' }).click()
    const card = page.locator('#audience-list .audience-card').filter({ hasText: 'VIPs' })
    await card.waitFor()
    assert.equal(await card.locator('.badge').textContent(), '2 numbers')
    const audienceId = await card.getAttribute('data-audience-id') ?? ''
    assert.match(audienceId, /^aud_/)

    step = 'post to it from the picker'
    await form.getByRole('radio', { name: 'Saved audience' }).check()
    const select = form.locator('#aud-saved-select')
    await select.selectOption({ label: 'VIPs (2 numbers)' })
    const text = `To the VIPs ${Date.now()}`
    await form.getByRole('radio', { name: 'Text' }).check()
    await form.getByRole('textbox', { name: 'Text', exact: true }).fill(text)
    await form.getByRole('button', { name: 'Post status' }).click()
    await form.locator('#post-result').filter({ hasText: /\(status #\d+\)/ }).waitFor()
    const posted = await s.emu.waitForStatus((r) => r.text === text && r.decrypted, 15_000)
    await s.emu.settled()
    const record = s.emu.status(posted.id)
    assert.equal(record.statusSetting, 'allowlist')
    assert.deepEqual([...new Set(record.deliveries.filter((d) => d.decrypted).map((d) => d.number))].sort(), [OWN, A, B].sort(), 'exactly the saved numbers (and the own phone)')
    const snapshot = (await sentAudience(s, text)).audience
    assert.equal(snapshot?.type, 'saved')
    assert.equal(snapshot?.name, 'VIPs')
    assert.deepEqual([...snapshot?.recipients ?? []].sort(), [A, B].sort())
    await page.locator('#status-list .status-item').filter({ hasText: text }).getByRole('button').click()
    const facts = page.locator('#status-dialog #status-facts')
    await facts.filter({ hasText: 'Saved audience “VIPs”' }).waitFor()
    assert.match(await facts.textContent() ?? '', new RegExp(`Recipients2 contacts: \\+(${A}|${B}), \\+(${A}|${B})`))
    await page.keyboard.press('Escape')

    step = 'schedule to it: the schedule names it'
    await form.getByRole('radio', { name: 'Later' }).check()
    await form.getByRole('textbox', { name: 'Text', exact: true }).fill('Later, to the VIPs')
    await form.getByRole('button', { name: 'Schedule status' }).click()
    const schedule = page.locator('#schedule-list .schedule-card').filter({ hasText: 'Later, to the VIPs' })
    await schedule.waitFor()
    assert.match(await schedule.locator('.schedule-rule').textContent() ?? '', /· to the saved audience “VIPs”$/)
    await form.getByRole('radio', { name: 'Now' }).check()

    step = 'delete it: gone from the panel and the picker'
    await card.getByRole('button', { name: 'Delete VIPs' }).click()
    await page.locator('#confirm-dialog').getByRole('button', { name: 'Delete' }).click()
    await card.waitFor({ state: 'detached' })
    await page.locator('#audiences-empty').waitFor({ state: 'visible' })
    assert.deepEqual(await select.locator('option').allTextContents(), ['No saved audiences yet'])
    await form.getByRole('button', { name: 'Post status' }).click()
    await page.locator('#aud-error').filter({ hasText: 'Choose a saved audience' }).waitFor()
    assert.deepEqual(errors, [], 'the page logged errors')
  } catch (err) {
    await failedAt(page, 'audiences', step, err)
  }
})

test("dashboard audience picker: my contacts except two found by search, then as the phone's privacy", { skip: skipWithoutChromium, timeout: 120_000 }, async (t) => {
  const s = await startStack(t, { RATE_LIMIT_MAX: '1000000' }, { autoCreateContacts: false })
  const D = '15550505014'
  for (const number of [A, B, C, D]) s.emu.addContact({ number })
  await s.link(SID, OWN)
  // the phone's address book, synced to the linked device through app-state sync
  await s.emu.setSavedContacts(OWN, [{ number: A, name: 'Alice' }, { number: B, name: 'Bob Builder' }, { number: C, name: 'Carol' }, { number: D, name: 'Dave' }])
  await waitFor(async () => (await s.api({ url: `/api/sessions/${SID}/contacts` })).json<{ data: { contacts: unknown[] } }>().data.contacts.length === 4, 20_000, 'the contacts synced')
  const { page, errors } = await open(t, baseUrl(s))
  const form = page.locator('#post-form')
  let step = 'the phone\'s contacts in the picker'
  try {
    await page.locator('#post-fields:not([disabled])').waitFor()
    await form.getByRole('radio', { name: 'My contacts except…' }).check()
    const results = page.locator('#aud-contact-results .contact-result')
    await page.locator('#aud-contact-count').filter({ hasText: '4 contacts shown.' }).waitFor()
    assert.deepEqual(await results.locator('.contact-name').allTextContents(), ['Alice', 'Bob Builder', 'Carol', 'Dave'])

    step = 'search, leave out'
    await form.getByLabel("Search the phone's contacts").fill('bob')
    await page.locator('#aud-contact-count').filter({ hasText: '1 contact shown.' }).waitFor()
    await form.getByRole('button', { name: 'Leave out Bob Builder' }).click()
    assert.equal(await form.getByLabel('Leave out', { exact: true }).inputValue(), B)
    assert.equal(await form.getByRole('button', { name: 'Leave out Bob Builder' }).getAttribute('aria-pressed'), 'true')
    await form.getByLabel("Search the phone's contacts").fill('')
    await page.locator('#aud-contact-count').filter({ hasText: '4 contacts shown.' }).waitFor()
    // typed in by hand as well: the list follows
    await form.getByLabel('Leave out', { exact: true }).fill(`${B}\n+${C}`)
    assert.equal(await form.getByRole('button', { name: 'Leave out Carol' }).getAttribute('aria-pressed'), 'true')

    step = 'post: everyone saved but those two, as a deny list'
    const text = `Contacts but two ${Date.now()}`
    await form.getByRole('textbox', { name: 'Text', exact: true }).fill(text)
    await form.getByRole('button', { name: 'Post status' }).click()
    await form.locator('#post-result').filter({ hasText: /\(status #\d+\)/ }).waitFor()
    const posted = await s.emu.waitForStatus((r) => r.text === text && r.decrypted, 15_000)
    await s.emu.settled()
    const record = s.emu.status(posted.id)
    assert.equal(record.statusSetting, 'denylist')
    assert.deepEqual([...new Set(record.deliveries.filter((d) => d.decrypted).map((d) => d.number))].sort(), [OWN, A, D].sort())
    assert.deepEqual((await sentAudience(s, text)).audience?.statusSetting, 'denylist')

    step = "the phone's privacy: shown, and followed"
    await s.emu.setStatusPrivacy(OWN, { mode: 'allowlist', numbers: [C] })
    await waitFor(async () => (await s.api({ url: `/api/sessions/${SID}/status-privacy` })).json<{ data: { mode: string | null } }>().data.mode === 'allowlist', 20_000, 'the privacy synced')
    await form.getByRole('radio', { name: 'As the phone\'s privacy' }).check()
    await page.locator('#aud-phone-mode').filter({ hasText: `Only share with 1 number: +${C}` }).waitFor()
    const text2 = `As the phone says ${Date.now()}`
    await form.getByRole('textbox', { name: 'Text', exact: true }).fill(text2)
    await form.getByRole('button', { name: 'Post status' }).click()
    await form.locator('#post-result').filter({ hasText: /\(status #\d+\)/ }).waitFor()
    const posted2 = await s.emu.waitForStatus((r) => r.text === text2 && r.decrypted, 15_000)
    await s.emu.settled()
    const record2 = s.emu.status(posted2.id)
    assert.equal(record2.statusSetting, 'allowlist')
    assert.deepEqual([...new Set(record2.deliveries.filter((d) => d.decrypted).map((d) => d.number))].sort(), [OWN, C].sort())
    await page.locator('#status-list .status-item').filter({ hasText: text2 }).getByRole('button').click()
    await page.locator('#status-facts').filter({ hasText: 'As the phone\'s privacy (only share with…)' }).waitFor()
    await page.keyboard.press('Escape')
    assert.deepEqual(errors, [], 'the page logged errors')
  } catch (err) {
    await failedAt(page, 'audiences', step, err)
  }
})

test('dashboard audience picker: an option whose endpoint answers 404 is disabled with a note', { skip: skipWithoutChromium, timeout: 60_000 }, async (t) => {
  const s = await build(t)
  await insertSession(s.app, SID)
  const url = await s.listen()
  if (chromiumPath === undefined) assert.fail('Chromium not found')
  const { page } = await openBrowser(t, chromiumPath)
  // a server of an older version: none of the three endpoints (what the service itself answers for an unknown path)
  await page.route(/\/api\/sessions\/[^/]+\/(contacts|status-privacy|audiences)(\?.*)?$/, async (route) => {
    await route.fulfill({ status: 404, contentType: 'application/json', body: JSON.stringify({ success: false, error: 'Route not found' }) })
  })
  await page.goto(url)
  await enterKey(page)
  await page.locator(`#session-list [data-session-id="${SID}"]`).waitFor()
  const form = page.locator('#post-form')
  for (const [name, option, note] of [
    ['My contacts except…', 'contacts', /no list of the phone's contacts/],
    ['As the phone\'s privacy', 'phone', /cannot read the phone's status privacy/],
    ['Saved audience', 'saved', /has no saved audiences/]
  ] as const) {
    const radio = form.getByRole('radio', { name })
    // The session is not connected, so the page keeps the post form disabled (and re-renders may disable it
    // again at any time): the option is chosen the way a click ends, by its change event, and the picker
    // reads its endpoint all the same. What is checked is the picker's answer to the 404: its note.
    await page.evaluate((value) => {
      const input = document.querySelector<HTMLInputElement>(`#post-form input[name="audience"][value="${value}"]`)
      if (input === null) throw new Error(`no audience option ${value}`)
      input.checked = true
      input.dispatchEvent(new Event('change', { bubbles: true }))
    }, option)
    await page.locator(`#aud-note-${option}`).filter({ hasText: note }).waitFor()
    assert.equal(await form.locator(`input[name="audience"][value="${option}"]`).evaluate((el) => (el as HTMLInputElement).disabled), true, `${option}: the option itself is disabled`)
    assert.equal(await form.getByRole('radio', { name: 'List' }).isChecked(), true, `${option}: back to List`)
    assert.match(await page.locator(`#aud-note-${option}`).textContent() ?? '', note)
    assert.ok(await page.locator(`#aud-note-${option}`).isVisible())
    assert.equal(await radio.getAttribute('aria-describedby'), `aud-note-${option}`)
  }
  await page.locator('#audiences-details > summary').click()
  await page.locator('#audiences-missing').waitFor({ state: 'visible' })
  assert.ok(await page.locator('#audience-create-details').isHidden(), 'no form to make one')
})
