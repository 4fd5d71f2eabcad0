import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { decodePatches, extractSyncdPatches, newLTHashState, proto, type BaileysEventMap, type Contact, type WASocket } from '@whiskeysockets/baileys'
import {
  connectUntilOpen,
  endSocket,
  linkWithQr,
  makeMemoryAuthState,
  trustEmulatorRoot,
  unrefBaileysUploadTimer,
  waitForEvent
} from '../src/baileys-helpers.js'
import { AppStateServer, PATCHES_PER_ANSWER, type Mutation } from '../src/app-state.js'
import { startEmulator, testCertPaths, type Emulator } from '../src/index.js'

// The phone's saved contacts and status privacy reach its linked devices the way the platform sends them:
// the app-state key shared by the phone, `server_sync` notifications, patches that the real rc14 client
// decodes (with MAC and LT-hash verification on) into contacts.upsert and settings.update; the status
// privacy query answers. Set through the library and the control API (PUT, exact shapes).

const OWN = '15553330000'
const ALICE = '15553330001'
const BOB = '15553330002'
const CAROL = '15553330003'
const pn = (n: string): string => `${n}@s.whatsapp.net`
/** without the keys Baileys sets to undefined */
const plain = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T
/** rc14 verifies app-state MACs only when asked to (Defaults appStateMacVerification: both false) */
const VERIFY = { appStateMacVerification: { patch: true, snapshot: true } }

/** Every contacts.upsert entry of `sock` from now on, by id (the latest wins). */
function collectContacts (sock: WASocket): Map<string, Partial<Contact>> {
  const seen = new Map<string, Partial<Contact>>()
  sock.ev.on('contacts.upsert', (list) => { for (const c of list) seen.set(c.id, c) })
  return seen
}

async function eventually<T> (probe: () => T | undefined | false, what: string, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = probe()
    if (value !== undefined && value !== false) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

describe("the phone's saved contacts and status privacy, through app-state sync", () => {
  let emu: Emulator
  let sock: WASocket
  let auth: ReturnType<typeof makeMemoryAuthState>
  let seen: Map<string, Partial<Contact>>
  const put = async (path: string, body: unknown): Promise<{ status: number, json: Record<string, unknown> }> => {
    const res = await fetch(`${emu.controlUrl}${path}`, { method: 'PUT', body: typeof body === 'string' ? body : JSON.stringify(body) })
    return { status: res.status, json: await res.json() as Record<string, unknown> }
  }
  const get = async (path: string): Promise<unknown> => await (await fetch(`${emu.controlUrl}${path}`)).json()

  before(async () => {
    unrefBaileysUploadTimer()
    emu = await startEmulator({ tls: testCertPaths() })
    trustEmulatorRoot(emu.rootPublicKey)
    emu.createAccount(OWN)
    emu.addContact({ number: ALICE, devices: 2 })
    auth = makeMemoryAuthState()
    ;({ sock } = await linkWithQr(emu, OWN, { auth, config: VERIFY }))
    seen = collectContacts(sock)
  })

  after(async () => {
    await endSocket(sock)
    await emu.stop()
  })

  it('the control API refuses bad bodies, naming the field, and unknown accounts', async () => {
    const cases: Array<[string, unknown, RegExp]> = [
      ['/saved-contacts', {}, /contacts \(array of \{ number, name \}\) is required/],
      ['/saved-contacts', { contacts: [{ number: 'abc', name: 'x' }] }, /contacts\[0\]\.number: invalid phone number/],
      ['/saved-contacts', { contacts: [{ number: ALICE, name: ' ' }] }, /contacts\[0\]\.name must be a string/],
      ['/saved-contacts', { contacts: [{ number: ALICE, name: 'A' }, { number: `+${ALICE}`, name: 'B' }] }, /contacts\[1\]\.number 15553330001 is listed twice/],
      ['/saved-contacts', { contacts: [{ number: ALICE, name: 'A', lid: '1' }] }, /contacts\[0\]\.lid is not a field/],
      ['/saved-contacts', '[1]', /body must be a JSON object/],
      ['/status-privacy', { mode: 'friends' }, /mode must be one of contacts, allowlist, denylist/],
      ['/status-privacy', { mode: 'contacts', numbers: [ALICE] }, /mode contacts takes none/],
      ['/status-privacy', { mode: 'allowlist', numbers: ALICE }, /numbers must be an array/],
      ['/status-privacy', { mode: 'denylist', numbers: ['12'] }, /numbers\[0\]: invalid phone number/]
    ]
    for (const [path, body, error] of cases) {
      const res = await put(`/accounts/${OWN}${path}`, body)
      assert.equal(res.status, 400, `${path} ${JSON.stringify(body)}`)
      assert.match(String(res.json.error), error)
    }
    assert.equal((await put('/accounts/15550009999/saved-contacts', { contacts: [] })).status, 404)
    assert.equal((await put('/accounts/15550009999/status-privacy', { mode: 'contacts' })).status, 404)
    // nothing was written by the refused calls: no key shared, no notification
    assert.deepEqual(await get(`/accounts/${OWN}/saved-contacts`), { contacts: [] })
    assert.deepEqual(await get(`/accounts/${OWN}/status-privacy`), { mode: 'contacts', numbers: [] })
    assert.equal(auth.creds.myAppStateKeyId, undefined)
  })

  it('PUT saved-contacts reaches the linked device at once: key share, server_sync, contacts.upsert with names, numbers and LIDs', async () => {
    const res = await put(`/accounts/${OWN}/saved-contacts`, { contacts: [{ number: ALICE, name: 'Alice Liddell' }, { number: `+${BOB}`, name: ' Bob ' }] })
    assert.equal(res.status, 200, JSON.stringify(res.json))
    const bobLid = emu.getContact(BOB).lid
    const aliceLid = emu.getContact(ALICE).lid
    assert.deepEqual(res.json, {
      contacts: [{ number: ALICE, name: 'Alice Liddell', lid: aliceLid }, { number: BOB, name: 'Bob', lid: bobLid }],
      version: 2, changes: 2, deliveredTo: 1, queuedFor: 0
    })
    await eventually(() => seen.get(pn(BOB))?.name === 'Bob' && seen.get(pn(ALICE))?.name === 'Alice Liddell', 'both contacts')
    assert.deepEqual(plain(seen.get(pn(ALICE))), { id: pn(ALICE), name: 'Alice Liddell', lid: `${aliceLid}@lid`, phoneNumber: pn(ALICE) })
    assert.deepEqual(plain(seen.get(pn(BOB))), { id: pn(BOB), name: 'Bob', lid: `${bobLid}@lid`, phoneNumber: pn(BOB) })
    assert.ok(auth.creds.myAppStateKeyId !== undefined, 'the app-state key was stored')
    // contactAction's lidJid is a LID mapping rc14 stores (lid-mapping.update)
    assert.equal(await sock.signalRepository.lidMapping.getLIDForPN(pn(BOB)), `${bobLid}@lid`)
    // the key share and the notification were acknowledged
    await eventually(() => emu.unackedCount(OWN) === 0, 'everything acked')
  })

  it('a rename, a removal and an addition arrive as upserts; a removed contact comes with no name (a REMOVE mutation)', async () => {
    seen.clear()
    const result = await emu.setSavedContacts(OWN, [{ number: BOB, name: 'Robert' }, { number: CAROL, name: 'Carol' }])
    assert.deepEqual([result.version, result.changes], [5, 3])
    await eventually(() => seen.size === 3, 'three upserts')
    assert.deepEqual(plain(seen.get(pn(ALICE))), { id: pn(ALICE), phoneNumber: pn(ALICE) })
    assert.equal(seen.get(pn(BOB))?.name, 'Robert')
    assert.equal(seen.get(pn(CAROL))?.name, 'Carol')
    // the same list again writes nothing and tells nobody
    assert.deepEqual(await emu.setSavedContacts(OWN, [{ number: BOB, name: 'Robert' }, { number: CAROL, name: 'Carol' }]).then((r) => [r.version, r.changes, r.deliveredTo]), [5, 0, 0])
    assert.deepEqual(emu.savedContacts(OWN).map((c) => c.name), ['Robert', 'Carol'])
  })

  it('PUT status-privacy: the device gets settings.update statusPrivacy, and the privacy query answers the list', async () => {
    const query = async () => await sock.query({ tag: 'iq', attrs: { to: 's.whatsapp.net', type: 'get', xmlns: 'status' }, content: [{ tag: 'privacy', attrs: {} }] })
    const first = await query()
    assert.deepEqual(plain(first.content[0]), { tag: 'privacy', attrs: {}, content: [{ tag: 'list', attrs: { type: 'contacts', default: 'true' }, content: [] }] })

    const update = waitForEvent(sock, 'settings.update', (u) => u.setting === 'statusPrivacy')
    const res = await put(`/accounts/${OWN}/status-privacy`, { mode: 'denylist', numbers: [BOB, '15553330004'] })
    assert.deepEqual(res.json, { mode: 'denylist', numbers: [BOB, '15553330004'], version: 1, changes: 1, deliveredTo: 1, queuedFor: 0 })
    const value = (await update as Extract<BaileysEventMap['settings.update'], { setting: 'statusPrivacy' }>).value
    const Mode = proto.SyncActionValue.StatusPrivacyAction.StatusDistributionMode
    assert.deepEqual({ mode: value.mode, userJid: value.userJid }, { mode: Mode.DENY_LIST, userJid: [pn(BOB), pn('15553330004')] })
    assert.equal(emu.getContact('15553330004').number, '15553330004', 'a number not known yet became a contact')
    const list = plain((await query()).content[0].content[0])
    assert.deepEqual(list, { tag: 'list', attrs: { type: 'blacklist', default: 'true' }, content: [{ tag: 'user', attrs: { jid: pn(BOB) } }, { tag: 'user', attrs: { jid: pn('15553330004') } }] })

    await emu.setStatusPrivacy(OWN, { mode: 'allowlist', numbers: [CAROL] })
    assert.deepEqual((await query()).content[0].content[0].attrs, { type: 'whitelist', default: 'true' })
    assert.deepEqual(await get(`/accounts/${OWN}/status-privacy`), { mode: 'allowlist', numbers: [CAROL] })
  })

  it('an offline device gets the notifications at its next login and syncs what changed meanwhile', async () => {
    await endSocket(sock)
    const result = await emu.setSavedContacts(OWN, [{ number: CAROL, name: 'Caroline' }])
    assert.deepEqual([result.deliveredTo, result.queuedFor], [0, 1])
    // listening from the socket's start: the queued notification comes right after the login
    seen = new Map()
    sock = await connectUntilOpen({ wsUrl: emu.wsUrl, auth, config: VERIFY, onSocket: (s) => { seen = collectContacts(s) } })
    await eventually(() => seen.get(pn(CAROL))?.name === 'Caroline' && seen.has(pn(BOB)) ? true : undefined, 'the changes made while offline')
    assert.deepEqual(plain(seen.get(pn(BOB))), { id: pn(BOB), phoneNumber: pn(BOB) }, 'Bob was removed')
  })

  it('a device linked later gets the key at its first login and syncs every collection from version 0', async () => {
    const late = makeMemoryAuthState()
    const keyed = new Promise<void>((resolve) => {
      const check = (): void => { if (late.creds.myAppStateKeyId !== undefined) resolve(); else setTimeout(check, 20) }
      check()
    })
    const { sock: second } = await linkWithQr(emu, OWN, { auth: late, config: VERIFY })
    try {
      await keyed
      const contacts = collectContacts(second)
      const privacy = waitForEvent(second, 'settings.update', (u) => u.setting === 'statusPrivacy')
      // rc14 syncs app state by itself only with history sync on; a client that does it itself asks from version 0
      await second.resyncAppState(['critical_unblock_low', 'regular_high'], false)
      await eventually(() => contacts.size > 0, 'the contacts')
      assert.deepEqual([...contacts.values()].filter((c) => c.name !== undefined).map((c) => c.name), ['Caroline'])
      const value = (await privacy as Extract<BaileysEventMap['settings.update'], { setting: 'statusPrivacy' }>).value
      assert.deepEqual(value.userJid, [pn(CAROL)])
    } finally {
      await endSocket(second)
    }
  })
})

describe("a legacy (not LID-migrated) account's phone", () => {
  it('shares its key from the own number and sends its contacts without LIDs', async () => {
    const emu = await startEmulator({ tls: testCertPaths() })
    trustEmulatorRoot(emu.rootPublicKey)
    const own = '15553339000'
    emu.createAccount(own, { legacy: true })
    const { sock: legacy } = await linkWithQr(emu, own, { config: VERIFY })
    try {
      const seen = collectContacts(legacy)
      const result = await emu.setSavedContacts(own, [{ number: '15553339001', name: 'Dora' }])
      assert.equal(emu.getContact('15553339001').legacy, true, "a legacy phone's new contact is legacy too")
      assert.equal(result.deliveredTo, 1)
      await eventually(() => seen.get(pn('15553339001'))?.name === 'Dora', "the legacy phone's contact")
      assert.deepEqual(plain(seen.get(pn('15553339001'))), { id: pn('15553339001'), name: 'Dora', phoneNumber: pn('15553339001') })
    } finally {
      await endSocket(legacy)
      await emu.stop()
    }
  })
})

describe('app-state patches (app-state.ts)', () => {
  it('a long history comes in pages; every patch decodes with its MACs verified and the LT hash agrees', async () => {
    const server = new AppStateServer()
    const count = PATCHES_PER_ANSWER + 20
    const mutations: Mutation[] = Array.from({ length: count }, (_, i) => ({
      index: ['contact', pn(String(15550000000 + i))],
      value: { contactAction: { fullName: `C${i}` }, timestamp: Date.now() },
      apiVersion: 2,
      operation: i === count - 1 ? 'remove' : 'set'
    }))
    // the last one removes the first contact again, with an all-absent contactAction as WA Web's removal
    mutations[count - 1] = { ...mutations[count - 1], index: mutations[0].index, value: { contactAction: {}, timestamp: Date.now() } }
    assert.equal(await server.write('critical_unblock_low', mutations), count)
    const getKey = async (id: string) => id === server.key.id.toString('base64') ? server.key.data as proto.Message.IAppStateSyncKeyData : undefined
    let state = newLTHashState()
    const names = new Map<string, string | null>()
    let pages = 0
    for (;;) {
      const answer = { tag: 'iq', attrs: {}, content: [{ tag: 'sync', attrs: {}, content: [server.answer('critical_unblock_low', state.version)] }] }
      const { critical_unblock_low: part } = await extractSyncdPatches(answer, {})
      pages++
      const decoded = await decodePatches('critical_unblock_low', part.patches, state, getKey as never, {}, undefined, undefined, true)
      // a MAC or LT-hash mismatch stops decodePatches early: every patch must have been applied
      assert.equal(decoded.state.version, state.version + part.patches.length)
      for (const m of Object.values(decoded.mutationMap)) names.set(m.index[1], m.syncAction.value?.contactAction?.fullName ?? null)
      state = decoded.state
      if (!part.hasMorePatches) break
    }
    assert.equal(pages, 2)
    assert.equal(state.version, count)
    assert.equal(names.get(pn('15550000000')), null, 'removed: an all-absent contactAction')
    assert.equal(names.get(pn(String(15550000000 + count - 2))), `C${count - 2}`)
    // one index removed: the LT hash holds count - 2 values
    assert.equal(Object.keys(state.indexValueMap).length, count - 2)
    // a device that is up to date gets no patch
    assert.deepEqual(server.answer('critical_unblock_low', count), { tag: 'collection', attrs: { name: 'critical_unblock_low', version: String(count) }, content: undefined })
  })
})
