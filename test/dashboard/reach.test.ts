import { test } from 'node:test'
import assert from 'node:assert/strict'
import { CHROMIUM_CANDIDATES, createQrSession, enterKey, findChromium, skipWithoutChromium, openBrowser, postText, qrDataUrl, failedAt, saveArtifact, startStack } from './browser.js'

// Issue 15 in the dashboard: each status shows its reach (viewers / recipients), likes and replies, live;
// the status dialog draws cumulative views since posting and lists reactions and replies, live as well.
// Headless Chromium against the real service and the emulator; a screenshot goes to test/.artifacts/.

const chromiumPath = findChromium()
const missing = `Chromium not found (looked at ${CHROMIUM_CANDIDATES.join(', ')}); install it with \`apt-get install -y chromium\` or set CHROMIUM_PATH`
// without Chromium the test skips with one line naming the package, except under CI, where it fails
const skip = skipWithoutChromium

test('dashboard: reach, likes and replies per status, the views chart, all live', { skip, timeout: 90_000 }, async (t) => {
  if (chromiumPath === undefined) assert.fail(missing)
  const { emu, url } = await startStack(t)
  const { page, errors } = await openBrowser(t, chromiumPath)
  const owner = '15550303001'
  const contacts = ['15550303011', '15550303012', '15550303013']
  let step = 'open the page'
  try {
    await page.goto(url)
    await enterKey(page)
    await page.locator('#live[data-state="on"]').waitFor()

    step = 'link a session and post a status to three contacts'
    const card = await createQrSession(page, 'reach', 'Reach phone')
    const qr = await qrDataUrl(page, 'reach')
    emu.createAccount(owner)
    for (const number of contacts) emu.addContact({ number })
    await emu.scan(owner, qr)
    await card.locator('.badge').filter({ hasText: 'Connected' }).waitFor()
    await page.locator('#post-fields:not([disabled])').waitFor()
    const text = `Which one do you like? ${Date.now()}`
    await postText(page, text, contacts)
    const item = page.locator('#status-list .status-item').filter({ hasText: text })
    const reach = item.locator('.status-reach')
    await reach.filter({ hasText: '0% reach' }).waitFor()
    const sent = await emu.waitForStatus((s) => s.text === text && s.decrypted)

    step = 'two views, a like and a reply show on the list item without a reload'
    await emu.sendView(sent.id, { viewer: contacts[0] })
    await emu.sendView(sent.id, { viewer: contacts[1], via: 'lid' })
    await emu.react(sent.id, { from: contacts[0], emoji: '❤️' })
    await emu.reply(sent.id, { from: contacts[1], text: 'the blue one', via: 'lid' })
    await reach.filter({ hasText: '67% reach' }).waitFor()
    await item.locator('.status-reach[data-reactions="1"][data-replies="1"]').waitFor()

    step = 'the dialog: chart of 2 views, the reaction beside the number, the reply'
    await item.getByRole('button').click()
    const dialog = page.locator('#status-dialog')
    await dialog.waitFor({ state: 'visible' })
    await dialog.locator('svg.views-chart[data-views="2"]').waitFor()
    assert.equal(await dialog.locator('.views-dot').count(), 2)
    const reaction = dialog.locator('#reactions-list li').filter({ hasText: `+${contacts[0]}` })
    await reaction.waitFor()
    assert.equal(await reaction.locator('.emoji').textContent(), '❤️')
    await dialog.locator('#replies-list li').filter({ hasText: 'the blue one' }).filter({ hasText: `+${contacts[1]}` }).waitFor()

    step = 'live in the open dialog: a third view, another like, a change, a second reply'
    await emu.sendView(sent.id, { viewer: contacts[2] })
    await emu.react(sent.id, { from: contacts[2], emoji: '👍' })
    await emu.react(sent.id, { from: contacts[0], emoji: '😮' })
    await emu.reply(sent.id, { from: contacts[2], text: 'both!' })
    await dialog.locator('svg.views-chart[data-views="3"]').waitFor()
    await dialog.locator('#reactions-title').filter({ hasText: 'Reactions (2)' }).waitFor()
    await dialog.locator('#reactions-list li').filter({ hasText: `+${contacts[0]}` }).locator('.emoji').filter({ hasText: '😮' }).waitFor()
    await dialog.locator('#replies-title').filter({ hasText: 'Replies (2)' }).waitFor()
    const shot = await saveArtifact(page, 'dashboard-reach')
    t.diagnostic(`screenshot: ${shot ?? 'not saved'}`)
    assert.ok(shot !== undefined, 'the screenshot was saved')

    step = 'a reaction taken back leaves the list and the count'
    await emu.react(sent.id, { from: contacts[2], emoji: '' })
    await dialog.locator('#reactions-title').filter({ hasText: 'Reactions (1)' }).waitFor()
    await page.keyboard.press('Escape')
    await item.locator('.status-reach[data-reactions="1"][data-replies="2"]').waitFor()
    await reach.filter({ hasText: '100% reach' }).waitFor()
    await page.locator('#overview-refresh').click()
    await page.locator('#ov-answers').filter({ hasText: '♥ 1 · ↩ 2' }).waitFor()
    assert.deepEqual(errors, [], 'the page logged errors')
  } catch (err) {
    await failedAt(page, 'reach', step, err)
  }
})
