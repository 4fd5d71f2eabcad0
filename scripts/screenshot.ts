// Takes docs/dashboard.png: the dashboard with a QR-linked session, a session waiting for its pairing
// code, and statuses with viewers, all through the real service wired to the emulator.
//
//   npx tsx scripts/screenshot.ts [out.png] [--width=1280] [--height=800] [--full]
//
// Needs Chromium (Debian: apt-get install -y chromium; or set CHROMIUM_PATH).
import { mkdirSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import {
  createQrSession, enterKey, findChromium, openBrowser, postText, qrDataUrl, scriptContext, startStack, CHROMIUM_CANDIDATES
} from '../test/dashboard/browser.js'

const args = process.argv.slice(2)
const flag = (name: string) => args.find((a) => a.startsWith(`--${name}=`))?.split('=')[1]
const out = resolve(args.find((a) => !a.startsWith('--')) ?? 'docs/dashboard.png')
const width = Number(flag('width') ?? 1280)
const height = Number(flag('height') ?? 800)
const fullPage = args.includes('--full')

const chromiumPath = findChromium()
if (chromiumPath === undefined) {
  console.error(`Chromium not found (looked at ${CHROMIUM_CANDIDATES.join(', ')}); apt-get install -y chromium, or set CHROMIUM_PATH`)
  process.exit(1)
}

const { t, close } = scriptContext()
try {
  const { emu, url } = await startStack(t)
  const { page, errors } = await openBrowser(t, chromiumPath, { width, height })
  const owner = '447700900123'
  const contacts = ['447700900456', '447700900789', '15550123001']
  emu.createAccount(owner)
  for (const number of contacts) emu.addContact({ number })

  await page.goto(url)
  await enterKey(page)
  await page.locator('#live[data-state="on"]').waitFor()

  const main = await createQrSession(page, 'main-phone', 'Main phone')
  await emu.scan(owner, await qrDataUrl(page, 'main-phone'))
  await main.locator('.badge').filter({ hasText: 'Connected' }).waitFor()

  const posts = [
    { text: 'New stock arriving Friday – come early!', viewers: [contacts[0]] },
    { text: 'Open today 9:00–18:00', viewers: [contacts[0], contacts[1], contacts[2]] }
  ]
  for (const post of posts) {
    await postText(page, post.text, contacts)
    const sent = await emu.waitForStatus((s) => s.text === post.text)
    for (const viewer of post.viewers) await emu.sendView(sent.id, { viewer })
  }
  await page.locator('#status-list .viewer-count').filter({ hasText: '3 viewers' }).waitFor()

  // a second session, linking by pairing code: its code shows in large type
  const details = page.locator('#create-details')
  if (await details.getAttribute('open') === null) await details.locator('summary').click()
  const form = page.locator('#create-form')
  await form.getByLabel('Name').fill('Shop phone')
  await form.getByLabel('Session ID').fill('shop')
  await form.getByLabel('Pairing code').check()
  await form.getByLabel('Phone number').fill('447700900999')
  await form.getByRole('button', { name: 'Create session' }).click()
  await page.locator('.session-card[data-session-id="shop"] .pairing-code').waitFor({ state: 'visible' })

  // back to the linked session, with a draft in the form, fresh overview
  await main.locator('.session-select').click()
  await page.locator('#status-list .viewer-count').filter({ hasText: '3 viewers' }).waitFor()
  await page.locator('#post-form').getByRole('textbox', { name: 'Text', exact: true }).fill('Weekend sale: 20 % off everything')
  await page.locator('#overview-refresh').click()
  await page.locator('#ov-viewers').filter({ hasText: '4' }).waitFor()
  await page.mouse.move(0, 0)
  await page.locator('#toast').evaluate((el) => { el.classList.remove('toast-visible') })
  await page.evaluate(() => { (document.activeElement as HTMLElement | null)?.blur() })
  await page.evaluate(() => { window.scrollTo(0, 0) })

  mkdirSync(dirname(out), { recursive: true })
  await page.screenshot({ path: out, fullPage })
  console.log(`saved ${out} (${width}×${height}${fullPage ? ', full page' : ''})`)
  if (errors.length > 0) {
    console.error('the page logged errors:\n' + errors.join('\n'))
    process.exitCode = 1
  }
} catch (err) {
  console.error(err)
  process.exitCode = 1
} finally {
  await close()
  // Baileys leaves a 30 s pre-key upload timer behind; nothing else is running
  process.exit()
}
