import assert from 'node:assert/strict'
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { dirname, join, resolve } from 'node:path'
import { createInterface } from 'node:readline'
import { after, before, describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'
import { DisconnectReason, type WASocket } from '@whiskeysockets/baileys'
import {
  connectUntilOpen,
  endSocket,
  makeMemoryAuthState,
  relayStatus,
  trustEmulatorRoot,
  unrefBaileysUploadTimer,
  waitForClose,
  waitForEvent
} from '../src/baileys-helpers.js'
import { testCertPaths, type AccountInfo, type StatusRecord } from '../src/index.js'

const here = dirname(fileURLToPath(import.meta.url))
const OWN = '15557770000'
const FRIEND = '15557770001'

interface Ready {
  wsUrl: string
  controlUrl: string
  mediaUrl: string
  rootPublicKey: string
  caFile: string
}

describe('emulator process and control API', () => {
  let child: ChildProcess
  let ready: Ready
  let sock: WASocket | undefined

  const call = async <T = Record<string, unknown>>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<{ status: number, json: T }> => {
    const response = await fetch(`${ready.controlUrl}${path}`, {
      method,
      headers: body === undefined ? undefined : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body)
    })
    return { status: response.status, json: (await response.json()) as T }
  }

  before(async () => {
    unrefBaileysUploadTimer()
    child = spawn(process.execPath, ['--import', 'tsx', join(here, '..', 'src', 'cli.ts')], {
      cwd: resolve(here, '..', '..'),
      env: { ...process.env, EMULATOR_CERT_DIR: dirname(testCertPaths().certFile), EMULATOR_LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'inherit']
    })
    const lines = createInterface({ input: child.stdout! })
    const first = await Promise.race([
      once(lines, 'line').then(([line]) => String(line)),
      once(child, 'exit').then(([code]) => Promise.reject(new Error(`emulator exited early (${code})`))),
      new Promise<string>((_, reject) => setTimeout(() => reject(new Error('emulator did not start within 15 s')), 15_000).unref())
    ])
    lines.close()
    ready = JSON.parse(first) as Ready
    trustEmulatorRoot(ready.rootPublicKey)
  })

  after(async () => {
    await endSocket(sock)
    if (child.exitCode === null) {
      child.kill('SIGKILL')
      await once(child, 'exit')
    }
  })

  it('prints one JSON line with the URLs, root key and certificate when ready', () => {
    assert.match(ready.wsUrl, /^ws:\/\/127\.0\.0\.1:\d+\/ws\/chat$/)
    assert.match(ready.controlUrl, /^http:\/\/127\.0\.0\.1:\d+$/)
    assert.match(ready.mediaUrl, /^https:\/\/127\.0\.0\.1:\d+$/)
    assert.equal(Buffer.from(ready.rootPublicKey, 'base64').length, 32)
    assert.equal(ready.caFile, testCertPaths().certFile)
  })

  it('creates and reports accounts and contacts, with JSON errors', async () => {
    const created = await call('POST', '/accounts', { number: OWN })
    assert.equal(created.status, 201)
    assert.equal(created.json.number, OWN)
    assert.match(String(created.json.lid), /^\d{15}$/)
    assert.equal(created.json.legacy, false, 'LID-migrated unless asked otherwise')
    assert.deepEqual((await call('GET', `/accounts/${OWN}`)).json, { number: OWN, lid: created.json.lid, legacy: false, connected: false, linkedDevices: [] })
    const contact = await call('POST', '/contacts', { number: FRIEND, devices: 2 })
    assert.equal(contact.status, 201)
    assert.equal(contact.json.devices, 2)
    assert.equal((await call('POST', '/accounts', { number: OWN })).status, 409)
    assert.equal((await call('GET', '/accounts/15557779999')).status, 404)
    const bad = await call('POST', '/accounts', '{not json')
    assert.equal(bad.status, 400)
    assert.equal(typeof bad.json.error, 'string')
    assert.equal((await call('POST', '/accounts', { number: 'abc' })).status, 400)
    assert.equal((await call('POST', `/accounts/${OWN}/faults`, { kind: 'explode' })).status, 400)
    // the next status stanzas refused with a code (refusals.ts)
    assert.deepEqual(await call('POST', `/accounts/${OWN}/refuse-statuses`, { error: 429, count: 2, after: 1 }), { status: 200, json: { number: OWN, error: 429, left: 2, after: 1 } })
    assert.deepEqual(await call('POST', `/accounts/${OWN}/refuse-statuses`, { error: 429, count: 0 }), { status: 200, json: { number: OWN, error: 429, left: 0, after: 0 } })
    assert.match(String((await call('POST', `/accounts/${OWN}/refuse-statuses`, { error: '429' })).json.error), /error must be a 3-digit code/)
    assert.equal((await call('POST', `/accounts/${OWN}/refuse-statuses`, { error: 429, count: 'two' })).status, 400)
    assert.equal((await call('POST', '/accounts/15557779999/refuse-statuses', { error: 429 })).status, 404)
    // legacy (not LID-migrated) accounts and contacts are asked for with legacy: true
    const legacyAccount = await call('POST', '/accounts', { number: '15557770010', legacy: true })
    assert.deepEqual([legacyAccount.status, legacyAccount.json.legacy], [201, true])
    assert.equal((await call('GET', '/accounts/15557770010')).json.legacy, true)
    const legacyContact = await call('POST', '/contacts', { number: '15557770011', legacy: true })
    assert.deepEqual([legacyContact.status, legacyContact.json.legacy], [201, true])
    assert.equal(contact.json.legacy, false)
    const added = await call('POST', `/contacts/${FRIEND}/devices`, {})
    assert.deepEqual([added.status, added.json.devices], [201, 3])
    assert.equal((await call('POST', '/contacts/15557779999/devices', {})).status, 404)
    const bulk = await call<{ legacy: boolean }[]>('POST', '/contacts/bulk', { count: 2, prefix: '1555778', legacy: true })
    assert.deepEqual(bulk.json.map((c) => c.legacy), [true, true])
    assert.equal((await call('POST', '/accounts', { number: '15557770012', legacy: 'yes' })).status, 400)
    assert.equal((await call('POST', '/contacts', { number: '15557770013', legacy: 1 })).status, 400)
    assert.equal((await call('GET', '/nowhere')).status, 404)
    assert.deepEqual((await call('GET', '/statuses')).json, [])
  })

  it('links, records a status and sends a receipt, all over HTTP', async () => {
    const auth = makeMemoryAuthState()
    let scanned: Promise<{ status: number, json: Record<string, unknown> }> | undefined
    sock = await connectUntilOpen({
      wsUrl: ready.wsUrl,
      auth,
      onQr: (qr) => {
        scanned ??= call('POST', `/accounts/${OWN}/scan`, { qr })
      }
    })
    assert.deepEqual((await scanned!).json, { linked: true, device: 1 })
    const account = (await call<AccountInfo>('GET', `/accounts/${OWN}`)).json
    assert.equal(account.connected, true)
    assert.equal(account.linkedDevices.length, 1)

    const friend = (await call<{ lid: string }>('GET', `/contacts/${FRIEND}`)).json
    const id = await relayStatus(sock, { text: 'over http' }, { statusJidList: [`${friend.lid}@lid`] })
    assert.equal((await call('GET', '/settled')).status, 200)
    const statuses = (await call<StatusRecord[]>('GET', '/statuses')).json
    const status = statuses.find((s) => s.id === id)
    assert.ok(status)
    assert.equal(status.text, 'over http')
    assert.deepEqual(status.recipients, [FRIEND])
    assert.equal(status.chunks, 1)

    const receipt = waitForEvent(sock, 'message-receipt.update')
    const view = await call('POST', `/statuses/${id}/views`, { viewer: FRIEND, type: 'played', via: 'lid' })
    assert.equal(view.status, 200)
    assert.equal(view.json.sent, true)
    const [update] = await receipt
    assert.equal(update.key.id, id)
    assert.match(update.receipt.userJid ?? '', /@lid$/)
    assert.equal((await call('POST', `/statuses/${id}/views`, { viewer: OWN })).status, 400, 'the owner did not receive it')
    assert.equal((await call('POST', '/statuses/UNKNOWN/views', { viewer: FRIEND })).status, 404)
    assert.equal((await call('POST', `/statuses/${id}/views`, { viewer: FRIEND, via: 'lid', participantPn: 'yes' })).status, 400)
    assert.equal((await call('POST', `/statuses/${id}/views`, { viewer: FRIEND, type: 'read', featureIncapable: true })).status, 400)
    const record = (await call<StatusRecord>('GET', `/statuses/${id}`)).json
    assert.deepEqual([record.statusSetting, record.rejected, record.stanzas.length], ['contacts', undefined, 1])

    // the grouped form (tulir/whatsmeow #1270): rc14 emits no event for it, but acks it
    const grouped = await call<{ stanzas: number, ids: string[] }>('POST', `/statuses/${id}/grouped-receipts`, {
      viewers: [{ viewer: FRIEND, type: 'read', participantPn: true }]
    })
    assert.equal(grouped.status, 200)
    assert.equal(grouped.json.stanzas, 1)
    assert.match(grouped.json.ids[0], /^SAGR/)
    assert.equal((await call('POST', `/statuses/${id}/grouped-receipts`, { viewers: [{ viewer: FRIEND, type: 'seen' }] })).status, 400)

    // Baileys acks the receipt right after handling it
    const deadline = Date.now() + 5_000
    let unacked = await call('GET', `/accounts/${OWN}/unacked`)
    while (unacked.json.count !== 0 && Date.now() < deadline) unacked = await call('GET', `/accounts/${OWN}/unacked`)
    assert.deepEqual(unacked, { status: 200, json: { count: 0 } })
    const acks = (await call<Record<string, unknown>[]>('GET', `/accounts/${OWN}/acks`)).json
    assert.equal(acks.length, 1)
    assert.deepEqual([acks[0].connected, acks[0].delivered, acks[0].acked, acks[0].unacked], [true, 2, 2, 0])
    const revealed = await call('POST', `/contacts/${FRIEND}/reveal-lid`, { to: OWN })
    assert.deepEqual(revealed, { status: 200, json: { sent: true, stanzas: 1, deliveredTo: 1, queuedFor: 0 } })
    assert.equal((await call('POST', `/contacts/${FRIEND}/reveal-lid`, {})).status, 400)
    assert.equal((await call('POST', '/contacts/15557779999/reveal-lid', { to: OWN })).status, 404)
    assert.deepEqual(await call('POST', '/unacked', { numbers: [OWN, OWN] }), { status: 200, json: { count: 0 } })
    assert.equal((await call('POST', '/unacked', { numbers: OWN })).status, 400)
    assert.equal((await call('POST', '/unacked', { numbers: [OWN, '15557779999'] })).status, 404)
    const unknown = await call('GET', '/accounts/15557779999/unacked')
    assert.equal(unknown.status, 404)
    assert.equal(typeof unknown.json.error, 'string')

    const closed = waitForClose(sock)
    assert.deepEqual((await call('POST', `/accounts/${OWN}/faults`, { kind: 'drop' })).json, { ok: true })
    assert.equal((await closed).statusCode, DisconnectReason.connectionClosed)
  })

  it('exits cleanly on SIGTERM', async () => {
    const exited = once(child, 'exit')
    child.kill('SIGTERM')
    const [code, signal] = (await Promise.race([
      exited,
      new Promise((_, reject) => setTimeout(() => reject(new Error('no exit within 5 s')), 5_000).unref())
    ])) as [number | null, NodeJS.Signals | null]
    assert.equal(signal, null)
    assert.equal(code, 0)
  })
})
