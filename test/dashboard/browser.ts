// Shared by the dashboard browser test and scripts/screenshot.ts: find Debian's Chromium, start the
// service wired to the emulator, and drive the page the way a person would.
import { existsSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import type { TestContext } from 'node:test'
import { chromium, type Browser as PwBrowser, type BrowserContext, type Page } from 'playwright-core'
import { build, TEST_API_KEY, type TestApp } from '../helper.js'
import { startEmulator, type Emulator } from '@status-tracker/emulator'
import { skipWithout } from '../support/server-process.js'

export const CHROMIUM_CANDIDATES = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'].filter((p): p is string => p !== undefined && p !== '')

/** The first Chromium executable present, or undefined. */
export function findChromium (): string | undefined {
  return CHROMIUM_CANDIDATES.find((p) => existsSync(p))
}

/**
 * node:test's `skip` for a browser test: one line naming the Debian package where no Chromium is found;
 * false where one is, and under CI (CI=true: the test runs and fails on the missing browser).
 */
export const skipWithoutChromium = skipWithout(findChromium(), 'chromium', `Chromium (looked at ${CHROMIUM_CANDIDATES.join(', ')}; or set CHROMIUM_PATH)`)

/** Cleanups registered the way node:test's `t.after` does; lets scripts reuse `build()`. */
export function scriptContext (): { t: TestContext, close: () => Promise<void> } {
  const cleanups: Array<() => unknown> = []
  const t = { after: (fn: () => unknown) => { cleanups.push(fn) } } as unknown as TestContext
  return {
    t,
    close: async () => {
      for (const fn of cleanups.reverse()) {
        try { await fn() } catch (err) { console.error('cleanup failed:', err) }
      }
    }
  }
}

export interface Stack {
  emu: Emulator
  testApp: TestApp
  url: string
}

/** The emulator, and the real service pointed at it, listening on a free loopback port. */
export async function startStack (t: TestContext): Promise<Stack> {
  const emu = await startEmulator()
  t.after(async () => { await emu.stop() })
  const testApp = await build(t, { WA_WEBSOCKET_URL: emu.wsUrl, WA_TEST_TRUST_ROOT: emu.rootPublicKey })
  const url = await testApp.listen()
  return { emu, testApp, url }
}

export interface Browser {
  context: BrowserContext
  page: Page
  /** console errors and uncaught page errors seen so far */
  errors: string[]
}

/**
 * One headless Chromium per process and executable, shared by the pages of the tests that run in it: a
 * launch costs about 1.7 CPU s with its helper processes (session 19, this machine's kind) and the
 * dashboard's test files run one after the other in a group. It closes 2 s after its last page's context
 * did, unless another test opens one meanwhile: a file run alone ends soon after its last test, and a
 * process that exits first takes its Chromium with it (Chromium exits when its pipe to Playwright closes).
 */
const browsers = new Map<string, { launched: Promise<PwBrowser>, open: number, idle?: NodeJS.Timeout }>()
const ARGS = ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu', '--no-first-run', '--no-default-browser-check']

async function sharedBrowser (executablePath: string): Promise<{ browser: PwBrowser, release: () => void }> {
  let entry = browsers.get(executablePath)
  if (entry === undefined) {
    const launched = chromium.launch({ executablePath, headless: true, args: ARGS })
    entry = { launched, open: 0 }
    browsers.set(executablePath, entry)
    launched.catch(() => { browsers.delete(executablePath) }) // the next test tries again (and fails by its own name)
  }
  const shared = entry
  clearTimeout(shared.idle)
  shared.open++
  const browser = await shared.launched
  const release = (): void => {
    if (--shared.open > 0) return
    // an openBrowser before it fires clears it (and counts itself in), so when it fires nobody holds the browser
    shared.idle = setTimeout(() => {
      browsers.delete(executablePath)
      browser.close().catch(() => {})
    }, 2000)
  }
  return { browser, release }
}

/**
 * A page in a fresh browser context (its own storage, viewport and zone) of the process's Chromium; the
 * context is closed after the test. `timezoneId`: the page's zone (default UTC).
 */
export async function openBrowser (t: TestContext, executablePath: string, viewport = { width: 1280, height: 800 }, { timezoneId = 'UTC' } = {}): Promise<Browser> {
  const { browser, release } = await sharedBrowser(executablePath)
  let context: BrowserContext
  try {
    context = await browser.newContext({
      viewport,
      deviceScaleFactor: 1,
      locale: 'en-GB',
      timezoneId,
      colorScheme: 'light',
      reducedMotion: 'reduce'
    })
  } catch (err) {
    release()
    throw err
  }
  // bounded, so a context that does not close fails the test by name instead of holding the file until its own timeout
  t.after(async () => {
    try {
      await context.close()
    } finally {
      release()
    }
  }, { timeout: 30_000 })
  const page = context.pages()[0] ?? await context.newPage()
  page.setDefaultTimeout(15_000)
  const errors: string[] = []
  page.on('console', (msg) => { if (msg.type() === 'error') errors.push(`console: ${msg.text()}`) })
  page.on('pageerror', (err) => { errors.push(`page error: ${err.message}`) })
  return { context, page, errors }
}

/** Saves a screenshot under test/.artifacts/ (git-ignored) and returns its path. */
export async function saveArtifact (page: Page, name: string): Promise<string | undefined> {
  try {
    const dir = join(process.cwd(), 'test', '.artifacts')
    mkdirSync(dir, { recursive: true })
    const path = join(dir, `${name.replace(/[^A-Za-z0-9_-]+/g, '-')}-${Date.now()}.png`)
    await page.screenshot({ path, fullPage: true })
    return path
  } catch {
    return undefined
  }
}

/**
 * Rethrows a browser test's failure with the step it failed at and a screenshot of the page then
 * (`<name>-<step>`), for a `catch` around the test's steps.
 */
export async function failedAt (page: Page, name: string, step: string, err: unknown): Promise<never> {
  const shot = await saveArtifact(page, `${name}-${step}`)
  if (err instanceof Error) err.message += `\n(step: ${step}${shot === undefined ? '' : `; screenshot: ${shot}`})`
  throw err
}

/** Types the key and submits with Enter (the keyboard path). */
export async function enterKey (page: Page, key = TEST_API_KEY): Promise<void> {
  const input = page.getByRole('textbox', { name: 'API key' })
  await input.fill(key)
  await input.press('Enter')
}

/** Creates a QR session through the form and returns its card. */
export async function createQrSession (page: Page, sessionId: string, sessionName: string) {
  // the form is folded away once sessions exist: decide after the list has loaded
  await page.locator('#session-list[aria-busy="false"]').waitFor({ state: 'attached' })
  const details = page.locator('#create-details')
  if (await details.getAttribute('open') === null) await details.locator('summary').click()
  const form = page.locator('#create-form')
  await form.getByLabel('Name').fill(sessionName)
  await form.getByLabel('Session ID').fill(sessionId)
  await form.getByLabel('QR code').check()
  await form.getByRole('button', { name: 'Create session' }).click()
  return page.locator(`.session-card[data-session-id="${sessionId}"]`)
}

/** Waits for the card's QR image and returns its data URL (what a phone would scan). */
export async function qrDataUrl (page: Page, sessionId: string): Promise<string> {
  const img = page.locator(`.session-card[data-session-id="${sessionId}"] img.qr`)
  await img.waitFor({ state: 'visible' })
  const src = await img.getAttribute('src')
  if (src === null || !src.startsWith('data:image/png;base64,')) throw new Error(`the QR image has no PNG data URL (src=${String(src).slice(0, 40)})`)
  return src
}

/** Posts a text status to `recipients` from the selected session's form; returns the result line. */
export async function postText (page: Page, text: string, recipients: string[]): Promise<string> {
  const form = page.locator('#post-form')
  await form.getByRole('radio', { name: 'Text' }).check()
  await form.getByRole('textbox', { name: 'Text', exact: true }).fill(text)
  await form.getByLabel('Recipients').fill(recipients.join('\n'))
  await form.getByRole('button', { name: 'Post status' }).click()
  const result = form.locator('#post-result')
  await result.filter({ hasText: /\(status #\d+\)/ }).waitFor()
  return (await result.textContent()) ?? ''
}
