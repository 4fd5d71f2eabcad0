import assert from 'node:assert/strict'
import { test } from 'node:test'
import { build } from '../helper.js'
import { enterKey, findChromium, openBrowser, saveArtifact, skipWithoutChromium } from './browser.js'
import { insertSession } from '../support/sessions.js'

// The dashboard with keys, in headless Chromium: the admin's Keys panel makes a key (shown once) and
// revokes it; the page opened with that scoped key shows only its session and no Keys panel.

const chromiumPath = findChromium()
// one line naming the package where Chromium is missing; under CI a missing browser fails instead
const skip = skipWithoutChromium

test('dashboard keys: the admin makes a scoped key; with it the page shows only its session; revoked, it is locked out', { skip, timeout: 90_000 }, async (t) => {
  if (chromiumPath === undefined) assert.fail('Chromium not found: install the Debian package "chromium" or set CHROMIUM_PATH')
  const s = await build(t)
  for (const id of ['shop-a', 'shop-b']) {
    await insertSession(s.app, id)
  }
  const url = await s.listen()
  const admin = await openBrowser(t, chromiumPath)
  let step = 'the admin opens the page'
  try {
    await admin.page.goto(url)
    await enterKey(admin.page)
    await admin.page.locator('#keys').waitFor({ state: 'visible' })
    await admin.page.locator('#keys-empty').waitFor({ state: 'visible' })

    step = 'make a read key for shop-a'
    await admin.page.locator('#key-create-details summary').click()
    await admin.page.locator('#key-name').fill('Shop A')
    await admin.page.locator('#key-sessions').fill('shop-a')
    await admin.page.getByRole('button', { name: 'Create key' }).click()
    await admin.page.locator('#key-secret').waitFor({ state: 'visible' })
    const key = await admin.page.locator('#key-secret-value').textContent() ?? ''
    assert.match(key, /^stk_[0-9a-f]{16}_/)
    const card = admin.page.locator('#key-list .apikey-card')
    await card.waitFor()
    assert.match(await card.textContent() ?? '', /Shop A.*Sessions: shop-a · Scopes: read/)
    await admin.page.locator('#key-secret-done').click()
    assert.equal(await admin.page.locator('#key-secret-value').textContent(), '', 'the key is gone from the page')

    step = 'a second page with the scoped key'
    const tenant = await openBrowser(t, chromiumPath)
    await tenant.page.goto(url)
    await enterKey(tenant.page, key)
    await tenant.page.locator('#session-list[aria-busy="false"]').waitFor({ state: 'attached' })
    await tenant.page.locator('#session-list [data-session-id="shop-a"]').waitFor()
    assert.equal(await tenant.page.locator('#session-list [data-session-id="shop-b"]').count(), 0, 'the other session is not shown')
    assert.equal(await tenant.page.locator('#keys').isVisible(), false, 'no Keys panel for a scoped key')
    await tenant.page.locator('#live[data-state="on"]').waitFor()
    assert.match(await tenant.page.locator('#key-who').textContent() ?? '', /Shop A/)
    assert.equal(await tenant.page.locator('#ov-storage-sub').textContent(), 'admin key only')

    step = 'the admin revokes it: the tenant page is locked out'
    await card.getByRole('button', { name: 'Revoke' }).click()
    await admin.page.locator('dialog[open]').getByRole('button', { name: 'Revoke' }).click()
    await admin.page.locator('#keys-empty').waitFor({ state: 'visible' })
    await tenant.page.locator('#key-screen').waitFor({ state: 'visible' })
    assert.deepEqual(admin.errors, [])
  } catch (err) {
    const shot = await saveArtifact(admin.page, 'dashboard-keys')
    throw new Error(`dashboard keys failed at "${step}"${shot === undefined ? '' : ` (screenshot ${shot})`}: ${err instanceof Error ? err.message : String(err)}`)
  }
})
