import { test } from 'node:test'
import assert from 'node:assert/strict'
import { build, TEST_API_KEY } from '../helper.js'
import { sleep } from '../support/wait.js'
import {
  CHROMIUM_CANDIDATES, createQrSession, enterKey, findChromium, skipWithoutChromium, openBrowser, postText, qrDataUrl, failedAt, startStack
} from './browser.js'

test('the dashboard is served at / with the API and docs untouched', async (t) => {
  const { app, listen } = await build(t)

  const index = await app.inject({ url: '/' })
  assert.equal(index.statusCode, 200, 'no key needed for the page')
  assert.match(String(index.headers['content-type']), /^text\/html/)
  assert.match(index.body, /<script src="\/socket\.io\/socket\.io\.js" defer><\/script>/)
  assert.match(index.body, /<script type="module" src="\/app\.js"><\/script>/)
  assert.match(String(index.headers['content-security-policy']), /script-src 'self'/)

  for (const [path, type] of [['/app.js', /javascript/], ['/api.js', /javascript/], ['/dom.js', /javascript/], ['/styles.css', /text\/css/], ['/index.html', /text\/html/]] as const) {
    const res = await app.inject({ url: path })
    assert.equal(res.statusCode, 200, path)
    assert.match(String(res.headers['content-type']), type, path)
  }
  // socket.io answers on the HTTP server itself (not through inject)
  const client = await fetch(`${await listen()}/socket.io/socket.io.js`)
  assert.equal(client.status, 200, 'socket.io serves its client')
  assert.match(await client.text(), /Socket\.IO/)

  // unknown paths, under /api or not, still get the JSON envelope
  for (const path of ['/api/nope', '/api/', '/nope.html', '/public/app.js']) {
    const res = await app.inject({ url: path, headers: { 'x-api-key': TEST_API_KEY } })
    assert.equal(res.statusCode, 404, path)
    assert.deepEqual(res.json(), { success: false, error: 'Route not found' }, path)
  }
  // the API still needs the key, and the docs stay public
  assert.equal((await app.inject({ url: '/api/health' })).statusCode, 401)
  assert.equal((await app.inject({ url: '/api/health', headers: { 'x-api-key': TEST_API_KEY } })).statusCode, 200)
  assert.equal((await app.inject({ url: '/docs/json' })).statusCode, 200)
  // the page is not part of the API description
  const paths = Object.keys((await app.inject({ url: '/docs/json' })).json<{ paths: Record<string, unknown> }>().paths)
  assert.ok(!paths.includes('/') && !paths.includes('/app.js'), paths.join(', '))
})

const chromiumPath = findChromium()
const missing = `Chromium not found (looked at ${CHROMIUM_CANDIDATES.join(', ')}); install it with \`apt-get install -y chromium\` or set CHROMIUM_PATH`
// without Chromium the test skips with one line naming the package, except under CI, where it fails
const skip = skipWithoutChromium

test('dashboard end to end: key, QR link, post a status, live viewer', { skip, timeout: 90_000 }, async (t) => {
  if (chromiumPath === undefined) assert.fail(missing)
  const started = Date.now()
  const { emu, url } = await startStack(t)
  const { page, errors } = await openBrowser(t, chromiumPath)
  const owner = '15550101001'
  const contact = '15550202002'
  const second = '15550202003'
  const text = `Hello from the dashboard ${Date.now()}`
  let step = 'open the page'

  // the live channel passes through here: status-viewers-update (the full list) can be held back, so
  // the page has to show a new viewer from status-viewers-added alone
  let dropFullLists = false
  let dropped = 0
  await page.routeWebSocket(/\/socket\.io\//, (ws) => {
    const server = ws.connectToServer()
    server.onMessage((message) => {
      if (dropFullLists && typeof message === 'string' && message.startsWith('42["status-viewers-update"')) { dropped++; return }
      ws.send(message)
    })
  })

  try {
    await page.goto(url)

    step = 'wrong key'
    await enterKey(page, 'this-is-not-the-key-0000')
    const keyError = page.locator('#key-error')
    await keyError.filter({ hasText: 'Wrong API key' }).waitFor()
    assert.match(await keyError.textContent() ?? '', /401 Unauthorized/)
    assert.ok(await page.locator('#dashboard').isHidden(), 'nothing is shown without the key')
    // the browser logs the refused request itself (Failed to load resource … 401): expected here only
    const expected401 = errors.filter((e) => /status of 401/.test(e)).length
    assert.ok(expected401 <= 1, errors.join('\n'))
    errors.length = 0

    step = 'right key'
    await enterKey(page)
    await page.locator('#dashboard').waitFor({ state: 'visible' })
    await page.locator('#live[data-state="on"]').waitFor()
    await page.locator('#ov-health').filter({ hasText: 'Healthy' }).waitFor()

    step = 'create a QR session'
    const card = await createQrSession(page, 'phone1', 'Main phone')
    await card.waitFor()
    const qr = await qrDataUrl(page, 'phone1')

    step = 'scan the QR image shown on the page'
    emu.createAccount(owner)
    emu.addContact({ number: contact })
    await emu.scan(owner, qr)
    await card.locator('.badge').filter({ hasText: 'Connected' }).waitFor()
    assert.match(await card.locator('.session-meta').textContent() ?? '', new RegExp(`\\+${owner}`))
    assert.ok(await card.locator('img.qr').isHidden(), 'the QR code goes away once linked')

    step = 'post a text status'
    await page.locator('#post-fields:not([disabled])').waitFor()
    const result = await postText(page, text, [contact])
    assert.match(result, /Status sent to 1 contact/)
    const item = page.locator('#status-list .status-item').filter({ hasText: text })
    await item.waitFor()
    assert.equal(await item.locator('.viewer-count').textContent(), '0 viewers')

    step = 'open the status, then a view comes in'
    await item.getByRole('button').click()
    const dialog = page.locator('#status-dialog')
    await dialog.waitFor({ state: 'visible' })
    await dialog.locator('#viewers-empty').waitFor({ state: 'visible' })

    const sent = await emu.waitForStatus((s) => s.text === text)
    assert.deepEqual(sent.recipients.filter((n) => n !== owner), [contact])
    dropFullLists = true
    await emu.sendView(sent.id, { viewer: contact })

    step = 'the viewer appears without a reload, from status-viewers-added alone'
    const row = dialog.locator('#viewers-body tr').filter({ hasText: `+${contact}` })
    await row.waitFor()
    assert.match(await dialog.locator('#viewers-title').textContent() ?? '', /Viewers \(1\)/)
    await page.keyboard.press('Escape')
    await dialog.waitFor({ state: 'hidden' })
    await item.locator('.viewer-count').filter({ hasText: '1 viewer' }).waitFor()
    assert.ok(dropped >= 1, 'the full list was held back')

    step = 'a second viewer, with the full list arriving too'
    dropFullLists = false
    emu.addContact({ number: second })
    await emu.sendView(sent.id, { viewer: second, force: true })
    await item.locator('.viewer-count').filter({ hasText: '2 viewers' }).waitFor()
    await item.getByRole('button').click()
    await dialog.waitFor({ state: 'visible' })
    await dialog.locator('#viewers-title').filter({ hasText: 'Viewers (2)' }).waitFor()
    await emu.sendView(sent.id, { viewer: contact, type: 'played' }) // a repeat view: still two
    await sleep(400)
    assert.equal(await dialog.locator('#viewers-body tr').count(), 2)
    await page.keyboard.press('Escape')
    await dialog.waitFor({ state: 'hidden' })
    assert.equal(await item.locator('.viewer-count').textContent(), '2 viewers')

    step = 'phone width'
    await page.setViewportSize({ width: 390, height: 844 })
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)
    assert.ok(overflow <= 0, `the page scrolls sideways by ${overflow} px at 390 px wide`)
    await page.setViewportSize({ width: 1280, height: 800 })

    step = 'no console errors'
    assert.deepEqual(errors, [], 'the page logged errors')

    step = 'a stored key that is wrong sends the user back to the key prompt'
    await page.evaluate(() => { sessionStorage.setItem('statusTracker.apiKey', 'stale-key-stale-key-0000') })
    await page.reload()
    await page.locator('#key-screen').waitFor({ state: 'visible' })
    await keyError.filter({ hasText: /Unauthorized/ }).waitFor()
  } catch (err) {
    await failedAt(page, 'dashboard', step, err)
  }
  t.diagnostic(`browser flow took ${Date.now() - started} ms`)
})
