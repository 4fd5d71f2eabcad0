import assert from 'node:assert/strict'
import type { AddressInfo } from 'node:net'
import { test } from 'node:test'
import { waitFor } from '../helper.js'
import { startStack } from '../stack.js'
import { enterKey, failedAt, findChromium, openBrowser, saveArtifact, skipWithoutChromium } from './browser.js'

// Contacts' statuses in the dashboard (issue 30), in headless Chromium against the real service, real Baileys and
// the strict emulator: statuses contacts post appear live (contact-status), newest first; media is fetched only on
// "Show media"; "Tell them I viewed it" asks first, then sends the one read receipt; Like / Unlike and Reply send
// the account's answers (issue 39) and show them.

const chromiumPath = findChromium()
const OWN = '15550405001'
const SID = 'viewer'

test("dashboard: contacts' statuses arrive live; media only on request; a view receipt only when confirmed", { skip: skipWithoutChromium, timeout: 120_000 }, async (t) => {
  if (chromiumPath === undefined) assert.fail('Chromium not found: install the Debian package "chromium" or set CHROMIUM_PATH')
  const s = await startStack(t, { RATE_LIMIT_MAX: '1000000', ALLOW_PRIVATE_URLS: 'true' }, { statusAckDeadlineMs: 5000 })
  await s.link(SID, OWN)
  const alice = s.emu.addContact({ number: '15550405011' })
  const reads = (): number => s.emu.contactStatusLog(OWN).statuses.flatMap((x) => x.receipts.filter((r) => r.type === 'read')).length

  const { page, errors } = await openBrowser(t, chromiumPath)
  const items = page.locator('#contact-status-list .contact-status')
  let step = 'open the page'
  try {
    const { port } = s.app.server.address() as AddressInfo
    await page.goto(`http://127.0.0.1:${port}/`)
    await enterKey(page)
    await page.locator('#live[data-state="on"]').waitFor()
    await page.locator('#contact-statuses-empty').waitFor({ state: 'visible' })

    step = 'a text status and a media status arrive live, newest first'
    const text = await s.emu.postContactStatus(OWN, { from: alice.number, text: 'hello from alice' })
    await items.filter({ hasText: 'hello from alice' }).waitFor()
    const media = await s.emu.postContactStatus(OWN, { from: alice.number, media: { mimetype: 'image/jpeg', size: 2048, caption: 'a picture' } })
    await items.filter({ hasText: 'a picture' }).waitFor()
    assert.deepEqual(await items.evaluateAll((els) => els.map((e) => (e as HTMLElement).dataset.id)), [media.id, text.id])
    assert.match(await items.first().textContent() ?? '', /Image/)
    assert.match(await items.first().textContent() ?? '', /a picture \(image\/jpeg, /)
    assert.equal(await page.locator('#contact-statuses-empty').isHidden(), true)

    step = 'show media: fetched now, shown as an image'
    await items.first().getByRole('button', { name: 'Show media' }).click()
    await items.first().locator('img').waitFor()

    step = 'tell them: asked first; cancelled sends nothing, confirmed sends one read receipt'
    const textItem = items.filter({ hasText: 'hello from alice' })
    await textItem.getByRole('button', { name: 'Tell them I viewed it' }).click()
    await page.locator('#confirm-dialog').getByRole('button', { name: 'Cancel' }).click()
    await new Promise((resolve) => setTimeout(resolve, 500))
    assert.equal(reads(), 0)
    await textItem.getByRole('button', { name: 'Tell them I viewed it' }).click()
    await page.locator('#confirm-dialog').getByRole('button', { name: 'Send' }).click()
    await textItem.filter({ hasText: 'You told them you viewed it' }).waitFor()
    await waitFor(() => reads() === 1, 10_000, 'the read receipt at the emulator')
    assert.equal(await textItem.getByRole('button', { name: 'Tell them I viewed it' }).count(), 0)

    step = 'like, then reply (issue 39): each reaches the poster and is listed with the status'
    await textItem.getByRole('button', { name: 'Like 💚' }).click()
    await textItem.filter({ hasText: 'You liked it 💚' }).waitFor()
    const likes = (): number => s.emu.sentToContacts(OWN).filter((x) => x.kind === 'status-reaction' && x.deliveries.some((d) => d.decrypted)).length
    await waitFor(() => likes() === 1, 10_000, 'the like at the poster')
    await textItem.getByRole('textbox', { name: 'Reply to this status' }).fill('nice one')
    await textItem.getByRole('button', { name: 'Reply', exact: true }).click()
    await textItem.filter({ hasText: 'You: nice one' }).waitFor()
    await waitFor(() => s.emu.directMessages(alice.number).some((m) => m.decrypted), 10_000, 'the reply at the poster')
    await textItem.getByRole('button', { name: 'Unlike' }).click()
    await textItem.getByRole('button', { name: 'Like 💚' }).waitFor()
    await waitFor(() => likes() === 2, 10_000, 'the removal at the poster')

    step = 'nothing was left unacked'
    assert.deepEqual(s.emu.contactStatusLog(OWN).streamErrors, [])
    const shot = await saveArtifact(page, 'dashboard-contact-statuses')
    t.diagnostic(`screenshot: ${shot ?? 'not saved'}`)
    assert.deepEqual(errors, [], 'the page logged errors')
  } catch (err) {
    await failedAt(page, 'contact-statuses', step, err)
  }
})
