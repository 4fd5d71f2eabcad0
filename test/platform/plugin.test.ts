import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import Fastify from 'fastify'
import configPlugin from '../../plugins/core/config.js'
import dbPlugin from '../../plugins/core/db.js'
import domainEventsPlugin from '../../plugins/broadcaster/domain-events.js'
import contactsPlugin from '../../plugins/contacts/index.js'
import contactStatusesPlugin from '../../plugins/contact-statuses/index.js'
import platformPlugin from '../../plugins/platform/index.js'
import viewerIngestPlugin from '../../plugins/statuses/viewer-ingest.js'
import interactionIngestPlugin from '../../plugins/statuses/interaction-ingest.js'
import { loadConfig } from '../../src/config.js'
import { openDatabase } from '../../src/db/connection.js'
import { startEmulator, testCertPaths } from '@status-tracker/emulator'
import { insertSession } from '../support/sessions.js'

test('the platform plugin restores stored sessions on ready (not while registering) and closes them with the app', async (t) => {
  const emu = await startEmulator({ tls: testCertPaths() })
  const dir = mkdtempSync(join(tmpdir(), 'st-platform-plugin-'))
  t.after(async () => {
    await emu.stop()
    rmSync(dir, { recursive: true, force: true })
  })
  const config = loadConfig({
    API_KEY: 'test-api-key-0123456789abcdef',
    DATA_DIR: dir,
    UPLOAD_DIR: join(dir, 'uploads'),
    LOG_LEVEL: 'silent',
    WA_WEBSOCKET_URL: emu.wsUrl,
    WA_TEST_TRUST_ROOT: emu.rootPublicKey
  }, { envFile: false })
  const seed = await openDatabase(config.databaseFile)
  await insertSession(seed, 'stored')
  await seed.close()

  const app = Fastify({ logger: false })
  await app.register(configPlugin, { config })
  await app.register(dbPlugin)
  await app.register(domainEventsPlugin)
  await app.register(viewerIngestPlugin)
  await app.register(interactionIngestPlugin)
  await app.register(contactsPlugin)
  await app.register(contactStatusesPlugin)
  await app.register(platformPlugin)
  t.after(async () => { await app.close() })
  await app.after()
  assert.equal(app.platform.snapshot('stored'), null, 'nothing started during registration')

  await app.ready()
  const deadline = Date.now() + 10_000
  while (app.platform.snapshot('stored')?.qrCode == null) {
    assert.ok(Date.now() < deadline, 'the stored session was restored and shows a QR code')
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
  assert.equal(app.platform.snapshot('stored')?.status, 'connecting')

  await app.close()
  assert.equal(app.platform.snapshot('stored'), null)
  await assert.rejects(app.platform.startSession({ sessionId: 'stored', authMethod: 'qrcode', phoneNumber: null }), /closed/)
})
