import assert from 'node:assert/strict'
import type { AddressInfo } from 'node:net'
import { test } from 'node:test'
import { waitFor } from '../helper.js'
import { startStack } from '../stack.js'
import { enterKey, failedAt, findChromium, openBrowser, saveArtifact, skipWithoutChromium } from './browser.js'

// The health strip's expiry warning (issue 39 item 5), in headless Chromium against the real service, real Baileys
// and the emulator: an announced client expiration 10 days ahead shows nothing; 3 days ahead (within
// CLIENT_EXPIRY_WARN_DAYS 7) the Service tile says Degraded and names the date.

const chromiumPath = findChromium()
const OWN = '15550406001'
const DAY_S = 86_400

test('dashboard: the Service tile warns of an announced client expiration within CLIENT_EXPIRY_WARN_DAYS', { skip: skipWithoutChromium, timeout: 120_000 }, async (t) => {
  if (chromiumPath === undefined) assert.fail('Chromium not found: install the Debian package "chromium" or set CHROMIUM_PATH')
  const s = await startStack(t, { RATE_LIMIT_MAX: '1000000' })
  await s.link('expiry', OWN)
  const announced = async (t: number): Promise<void> => {
    s.emu.announceClientExpiration(OWN, { t })
    const expected = new Date(t * 1000).toISOString()
    await waitFor(async () => {
      const res = await s.api({ method: 'GET', url: '/api/health' })
      return res.json<{ data: { checks: { platform: { clientExpiresAt?: string | null } } } }>().data.checks.platform.clientExpiresAt === expected
    }, 10_000, 'the announced expiry in /api/health')
  }
  const now = Math.floor(Date.now() / 1000)
  await announced(now + 10 * DAY_S)

  const { page, errors } = await openBrowser(t, chromiumPath)
  const warning = page.locator('#ov-health-expiry')
  let step = 'open the page'
  try {
    const { port } = s.app.server.address() as AddressInfo
    await page.goto(`http://127.0.0.1:${port}/`)
    await enterKey(page)
    await page.locator('#ov-health').filter({ hasText: 'Healthy' }).waitFor()

    step = '10 days ahead: no warning'
    assert.equal(await warning.isHidden(), true)

    step = '3 days ahead: degraded, the date named'
    await announced(now + 3 * DAY_S)
    await page.locator('#overview-refresh').click()
    await page.locator('#ov-health').filter({ hasText: 'Degraded' }).waitFor()
    await warning.waitFor({ state: 'visible' })
    const expiresAt = new Date((now + 3 * DAY_S) * 1000)
    const text = await warning.textContent() ?? ''
    assert.match(text, /^Client build refused from .+: upgrade$/)
    // the page runs in UTC (openBrowser): the day of the month is the announced one
    assert.match(text, new RegExp(`\\b${expiresAt.getUTCDate()}\\b`), text)

    const shot = await saveArtifact(page, 'dashboard-health-expiry')
    t.diagnostic(`screenshot: ${shot ?? 'not saved'}`)
    assert.deepEqual(errors, [], 'the page logged errors')
  } catch (err) {
    await failedAt(page, 'health-expiry', step, err)
  }
})
