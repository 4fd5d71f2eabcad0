import assert from 'node:assert/strict'
import { rmSync } from 'node:fs'
import { test } from 'node:test'
import { buildApp } from '../../src/app.js'
import { openDatabase } from '../../src/db/connection.js'
import { startEmulator, testCertPaths } from '@status-tracker/emulator'
import { testConfig } from '../helper.js'
import { insertSession } from '../support/sessions.js'

test('the session supervisor restores stored sessions on ready (not while registering); the platform closes them with the app', async (t) => {
  const emu = await startEmulator({ tls: testCertPaths() })
  const { config, dir } = testConfig({ WA_WEBSOCKET_URL: emu.wsUrl, WA_TEST_TRUST_ROOT: emu.rootPublicKey })
  t.after(async () => {
    await emu.stop()
    rmSync(dir, { recursive: true, force: true })
  })
  const seed = await openDatabase(config.databaseFile)
  await insertSession(seed, 'stored')
  await seed.close()

  // the whole app, registered but not ready; one node: every stored session is this node's (plugins/session-supervisor)
  const app = await buildApp(config)
  t.after(async () => { await app.close() })
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
