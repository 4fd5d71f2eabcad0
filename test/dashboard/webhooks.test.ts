import assert from 'node:assert/strict'
import { test } from 'node:test'
import { Webhook } from 'standardwebhooks'
import { build } from '../helper.js'
import { startReceiver } from '../webhooks/receiver.js'
import { CHROMIUM_CANDIDATES, enterKey, findChromium, skipWithoutChromium, openBrowser, failedAt } from './browser.js'

// The dashboard's Webhooks panel in headless Chromium, against the real service and a receiver on 127.0.0.1.

const chromiumPath = findChromium()
const missing = `Chromium not found (looked at ${CHROMIUM_CANDIDATES.join(', ')}); install it with \`apt-get install -y chromium\` or set CHROMIUM_PATH`
// without Chromium the test skips with one line naming the package, except under CI, where it fails
const skip = skipWithoutChromium

test('dashboard webhooks panel: create (secret shown once), deliveries with their state, disable, delete', { skip, timeout: 90_000 }, async (t) => {
  if (chromiumPath === undefined) assert.fail(missing)
  const s = await build(t, { ALLOW_PRIVATE_URLS: 'true', WEBHOOK_BASE_DELAY_MS: '1500', WEBHOOK_MAX_DELAY_MS: '3000' })
  const url = await s.listen()
  const rx = await startReceiver(t)
  const { page, errors } = await openBrowser(t, chromiumPath)
  let step = 'open the page'
  try {
    await page.goto(url)
    await enterKey(page)
    await page.locator('#dashboard').waitFor({ state: 'visible' })
    await page.locator('#webhooks-empty').waitFor({ state: 'visible' })

    step = 'create a webhook for one event'
    await page.locator('#webhook-create-details summary').click()
    await page.locator('#webhook-url').fill(rx.url)
    await page.getByLabel('All events').uncheck()
    await page.locator('#webhook-event-list input[value="session-deleted"]').check()
    await page.locator('#webhook-description').fill('CRM')
    await page.getByRole('button', { name: 'Create webhook' }).click()

    step = 'the secret, once'
    const secretBox = page.locator('#webhook-secret')
    await secretBox.waitFor({ state: 'visible' })
    const secret = await page.locator('#webhook-secret-value').textContent() ?? ''
    assert.match(secret, /^whsec_[A-Za-z0-9+/]{32}$/)
    const card = page.locator('#webhook-list .webhook-card')
    await card.waitFor()
    assert.equal(await card.locator('.webhook-url').textContent(), rx.url)
    assert.match(await card.locator('.session-meta').textContent() ?? '', /session-deleted · every session · CRM/)
    await page.getByRole('button', { name: 'Done' }).click()
    await secretBox.waitFor({ state: 'hidden' })
    assert.equal(await page.locator('#webhook-secret-value').textContent(), '', 'the secret is gone from the page')
    const listed = await s.api({ method: 'GET', url: '/api/webhooks' })
    assert.doesNotMatch(listed.body, /whsec_/)

    step = 'a delivery, verified with the shown secret, listed as delivered'
    s.app.domainEvents.emit('session-deleted', { sessionId: 'gone' })
    await rx.waitForAccepted(1)
    assert.deepEqual(rx.verified(secret).map((j) => [j.type, j.data.sessionId]), [['session-deleted', 'gone']])
    await card.getByRole('button', { name: 'Deliveries' }).click()
    const row = card.locator('.deliveries tbody tr').first()
    await row.locator('.delivery-state').filter({ hasText: 'Delivered' }).waitFor()
    assert.match(await row.textContent() ?? '', /session-deleted.*Delivered.*1.*HTTP 200/)

    step = 'a failing delivery shows as pending, and the list follows live events'
    rx.mode = 503
    s.app.domainEvents.emit('session-deleted', { sessionId: 'again' })
    // the event reached the page on socket.io too, and the open list is read again
    await card.locator('.deliveries tbody tr .delivery-state').filter({ hasText: /Pending|Sending/ }).first().waitFor({ timeout: 10_000 })
    rx.mode = 200

    step = 'disable, then delete'
    await card.getByRole('button', { name: 'Disable' }).click()
    await card.locator('.badge').filter({ hasText: 'Disabled' }).waitFor()
    const after = (await s.api({ method: 'GET', url: '/api/webhooks' })).json<{ data: Array<{ enabled: boolean }> }>().data
    assert.equal(after[0].enabled, false)
    await card.getByRole('button', { name: 'Delete' }).click()
    await page.locator('#confirm-ok').click()
    await page.locator('#webhooks-empty').waitFor({ state: 'visible' })
    assert.equal((await s.api({ method: 'GET', url: '/api/webhooks' })).json<{ data: unknown[] }>().data.length, 0)

    step = 'no console errors (the CSP allowed everything the panel does)'
    assert.deepEqual(errors, [])
    // the secret was never in the page's storage
    assert.equal(await page.evaluate(() => JSON.stringify(sessionStorage).includes('whsec_')), false)
    assert.ok(new Webhook(secret))
  } catch (err) {
    await failedAt(page, 'webhooks', step, err)
  }
})
