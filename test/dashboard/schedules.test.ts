import assert from 'node:assert/strict'
import type { AddressInfo } from 'node:net'
import { test } from 'node:test'
import type { Page } from 'playwright-core'
import { waitFor } from '../helper.js'
import { startStack } from '../stack.js'
import { enterKey, findChromium, openBrowser, failedAt, saveArtifact, skipWithoutChromium } from './browser.js'

// Scheduled statuses in the dashboard (issue 24), in headless Chromium against the real service, real Baileys
// and the emulator: the post form's When part schedules a text status a few seconds ahead; the list shows it,
// and its run (with the status it posted) arrives live from scheduled-status-fired; a repeating schedule is
// paused, resumed and deleted; an error the API names a field for is shown next to that field.

const chromiumPath = findChromium()
const OWN = '15550404001'
const A = '15550404011'
const SID = 'planner'

interface Schedule { id: string, state: string, nextRunAt: string | null, runs: Array<{ statusId: string | null, state: string, late: boolean }> }

/** a datetime-local value `ms` from now, in the page's own zone, to the second */
async function localIn (page: Page, ms: number): Promise<string> {
  // a string, not a function: the test's compiler would add helpers the page does not have
  return await page.evaluate(`(() => {
    const d = new Date(Date.now() + ${ms})
    return [d.getFullYear(), '-', d.getMonth() + 1, '-', d.getDate(), 'T', d.getHours(), ':', d.getMinutes(), ':', d.getSeconds()]
      .map((x) => typeof x === 'number' ? String(x).padStart(2, '0') : x).join('')
  })()`)
}

test('dashboard schedules: a status scheduled seconds ahead fires live; a repeating one is paused, resumed and deleted', { skip: skipWithoutChromium, timeout: 120_000 }, async (t) => {
  if (chromiumPath === undefined) assert.fail('Chromium not found: install the Debian package "chromium" or set CHROMIUM_PATH')
  const s = await startStack(t, { RATE_LIMIT_MAX: '1000000' })
  await s.link(SID, OWN)
  s.emu.addContact({ number: A })
  const schedules = async (): Promise<Schedule[]> => (await s.api({ url: `/api/sessions/${SID}/scheduled-statuses` })).json<{ data: Schedule[] }>().data

  const { page, errors } = await openBrowser(t, chromiumPath)
  const form = page.locator('#post-form')
  let step = 'open the page'
  try {
    const { port } = s.app.server.address() as AddressInfo
    await page.goto(`http://127.0.0.1:${port}/`)
    await enterKey(page)
    await page.locator('#live[data-state="on"]').waitFor()
    await page.locator('#post-fields:not([disabled])').waitFor()
    await page.locator('#schedules-empty').waitFor({ state: 'visible' })

    step = 'an error the API names a field for shows next to it'
    await form.getByRole('radio', { name: 'Text' }).check()
    await form.getByRole('textbox', { name: 'Text', exact: true }).fill('too late')
    await form.getByRole('radio', { name: 'Later' }).check()
    assert.equal(await form.locator('#post-submit').textContent(), 'Schedule status')
    await form.getByLabel('Date and time').fill(await localIn(page, -3_600_000))
    await form.getByRole('button', { name: 'Schedule status' }).click()
    await page.locator('#sched-at-error').filter({ hasText: 'body.at is in the past' }).waitFor()
    assert.equal(await page.locator('#post-error').textContent(), '', 'not in the form-wide error')

    step = 'schedule a text status five seconds ahead'
    const text = `Scheduled from the dashboard ${Date.now()}`
    await form.getByRole('textbox', { name: 'Text', exact: true }).fill(text)
    await form.getByLabel('Recipients').fill(A)
    await form.getByLabel('Date and time').fill(await localIn(page, 5000))
    await form.getByRole('button', { name: 'Schedule status' }).click()
    await form.locator('#post-result').filter({ hasText: /^Scheduled: the first run is/ }).waitFor()
    assert.equal(await page.locator('#sched-at-error').textContent(), '', 'the old error is gone')
    const card = page.locator('#schedule-list .schedule-card').filter({ hasText: text })
    await card.waitFor()
    assert.equal(await card.locator('.badge').textContent(), 'Active')
    assert.match(await card.locator('.schedule-rule').textContent() ?? '', /^Once, .* · to 1 number$/)
    assert.match(await card.locator('.schedule-next').textContent() ?? '', /^Next run /)
    assert.equal(await card.locator('tr.run').count(), 0)

    step = 'it fires: the run with its status arrives live'
    const run = card.locator('tr.run[data-state="fired"]')
    await run.waitFor({ timeout: 30_000 })
    const statusId = await run.getAttribute('data-status-id') ?? ''
    assert.match(statusId, /^\d+$/)
    assert.equal(await run.locator('.run-status').textContent(), `#${statusId}`)
    await card.locator('.badge').filter({ hasText: 'Done' }).waitFor()
    assert.equal(await card.locator('.schedule-next').textContent(), 'No run left.')
    assert.match(await card.locator('.card-message').textContent() ?? '', new RegExp(`fired: status #${statusId}\\.`))
    const [stored] = (await schedules()).filter((x) => x.runs.some((r) => r.statusId === statusId))
    assert.equal(stored.state, 'done')
    assert.deepEqual(stored.runs.map((r) => [r.state, r.late]), [['fired', false]])
    const posted = await s.emu.waitForStatus((r) => r.text === text && r.decrypted, 15_000)
    assert.ok(posted.recipients.includes(A))
    await page.locator(`#status-list .status-item[data-status-id="${statusId}"]`).filter({ hasText: text }).waitFor()

    step = 'a repeating one: every minute, three runs, from five seconds ahead'
    const repeatText = `Every minute ${Date.now()}`
    await form.getByRole('textbox', { name: 'Text', exact: true }).fill(repeatText)
    await form.getByLabel('Repeat').selectOption('minutes')
    await form.getByLabel('Every (N)').fill('1')
    await form.getByRole('radio', { name: 'After a number of runs' }).check()
    await form.getByLabel('Number of runs', { exact: true }).fill('3')
    await form.getByLabel('Date and time').fill(await localIn(page, 5000))
    await form.getByRole('button', { name: 'Schedule status' }).click()
    const repeating = page.locator('#schedule-list .schedule-card').filter({ hasText: repeatText })
    await repeating.waitFor()
    assert.match(await repeating.locator('.schedule-rule').textContent() ?? '', /^Every minute, from .*, at most 3 runs · to 1 number$/)
    await repeating.locator('tr.run[data-state="fired"]').waitFor({ timeout: 30_000 })
    assert.equal(await repeating.locator('.badge').textContent(), 'Active', 'two runs are left')
    assert.equal(await repeating.locator('.runs-title').textContent(), 'Runs (1)')

    step = 'pause, resume'
    await repeating.getByRole('button', { name: /^Pause/ }).click()
    await repeating.locator('.badge').filter({ hasText: 'Paused' }).waitFor()
    assert.match(await repeating.locator('.schedule-next').textContent() ?? '', /^Paused: no run fires/)
    const id = await repeating.getAttribute('data-schedule-id') ?? ''
    assert.equal((await schedules()).find((x) => x.id === id)?.state, 'paused')
    await repeating.getByRole('button', { name: /^Resume/ }).click()
    await repeating.locator('.badge').filter({ hasText: 'Active' }).waitFor()
    assert.equal((await schedules()).find((x) => x.id === id)?.state, 'active')

    step = 'delete'
    await repeating.getByRole('button', { name: /^Delete/ }).click()
    await page.locator('#confirm-dialog').getByRole('button', { name: 'Delete' }).click()
    await repeating.waitFor({ state: 'detached' })
    await waitFor(async () => !(await schedules()).some((x) => x.id === id), 5000, 'the schedule gone from the API')
    assert.equal(await page.locator('#schedule-list .schedule-card').count(), 1, 'the fired one stays')

    step = 'phone width'
    await page.setViewportSize({ width: 390, height: 844 })
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)
    assert.ok(overflow <= 0, `the page scrolls sideways by ${overflow} px at 390 px wide`)
    const shot = await saveArtifact(page, 'dashboard-schedules')
    t.diagnostic(`screenshot: ${shot ?? 'not saved'}`)
    assert.deepEqual(errors.filter((e) => !/status of 400/.test(e)), [], 'the page logged errors (besides the 400 above)')
  } catch (err) {
    await failedAt(page, 'schedules', step, err)
  }
})
