import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test, type TestContext } from 'node:test'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { SendStatusBodySchema } from '../../schemas/status.js'
import { InsightsQuerySchema } from '../../schemas/insights.js'
import { TEST_API_KEY, waitFor } from '../helper.js'
import { serveFiles, settledPost, startStack, type Stack } from '../stack.js'
import { nodeArgs, ROOT } from '../support/processes.js'
import { png } from '../uploads/fixtures.js'

// The MCP server (mcp/) as an assistant runs it: a child process on stdio, driven by the SDK's own Client,
// calling the real service over HTTP with a key; the phone's part is the emulator's. One stack for every case.

const OWN = '4915300000301'
const PAIRED = '4915300000302'
const A = '4915300000311'
const B = '4915300000312'
const C = '4915300000313'
const SID = 'mcp'

const TOOLS = ['list_sessions', 'link_session', 'post_status', 'list_sent_statuses', 'read_insights', 'read_contact_insights', 'read_contact_statuses']

interface Mcp { client: Client, stderr: () => string, transportErrors: Error[] }

/** the MCP server started as the docs say (`npm run --silent mcp`), or straight from its entry (its compiled copy under npm test) */
async function startMcp (t: TestContext, s: Stack, apiKey: string, via: 'npm' | 'entry'): Promise<Mcp> {
  const [command, args] = via === 'npm' ? ['npm', ['run', '--silent', 'mcp']] : [process.execPath, nodeArgs('mcp/main.ts')]
  const transport = new StdioClientTransport({
    command,
    args,
    cwd: ROOT,
    env: { ...process.env as Record<string, string>, STATUS_TRACKER_URL: s.baseUrl, STATUS_TRACKER_API_KEY: apiKey, STATUS_TRACKER_LINK_WAIT_MS: '30000' },
    stderr: 'pipe'
  })
  let stderr = ''
  transport.stderr?.on('data', (chunk: Buffer) => { stderr += chunk.toString() })
  const transportErrors: Error[] = []
  const client = new Client({ name: 'status-tracker-test', version: '1.0.0' })
  client.onerror = (err) => { transportErrors.push(err) }
  await client.connect(transport)
  t.after(async () => { await client.close() })
  return { client, stderr: () => stderr, transportErrors }
}

async function call (mcp: Mcp, name: string, args: Record<string, unknown> = {}): Promise<CallToolResult> {
  return await mcp.client.callTool({ name, arguments: args }) as CallToolResult
}

/** the JSON of a successful call's first (text) content item */
async function data<T = Record<string, unknown>> (mcp: Mcp, name: string, args: Record<string, unknown> = {}): Promise<T> {
  const result = await call(mcp, name, args)
  const first = result.content[0]
  assert.ok(first.type === 'text', `${name}: a text item first`)
  assert.notEqual(result.isError, true, `${name} failed: ${first.text}`)
  return JSON.parse(first.text) as T
}

/** a failed call's message */
async function failure (mcp: Mcp, name: string, args: Record<string, unknown>): Promise<string> {
  const result = await call(mcp, name, args)
  assert.equal(result.isError, true, `${name} should fail: ${JSON.stringify(result.content)}`)
  const first = result.content[0]
  assert.ok(first.type === 'text')
  return first.text
}

const plain = (schema: unknown) => JSON.parse(JSON.stringify(schema)) as unknown

test('the MCP server: tools listed from the REST schemas, a session linked by QR image and by pairing code, a status posted to the emulator\'s recipients, viewers, insights, contacts\' statuses, scopes', { timeout: 240_000 }, async (t) => {
  // the url status below is served from loopback: private addresses allowed in this test only
  const s = await startStack(t, { ALLOW_PRIVATE_URLS: 'true' })
  const admin = await startMcp(t, s, TEST_API_KEY, 'npm')
  const keyRes = await s.api({ method: 'POST', url: '/api/keys', payload: { name: 'reader', sessions: [SID], scopes: ['read'] } })
  assert.equal(keyRes.statusCode, 200, keyRes.body)
  const readerKey = keyRes.json<{ data: { key: string } }>().data.key
  const reader = await startMcp(t, s, readerKey, 'entry')

  await t.test('tools/list: every tool, its input schema taken from the route\'s TypeBox schema', async () => {
    const { tools } = await admin.client.listTools()
    assert.deepEqual(tools.map((tool) => tool.name), TOOLS)
    const post = tools.find((tool) => tool.name === 'post_status')!
    const props = post.inputSchema.properties as Record<string, unknown>
    // every send-status field, as the route declares it (a field added there appears here), plus the session and the schedule's time
    assert.deepEqual(Object.keys(props).sort(), ['sessionId', ...Object.keys(SendStatusBodySchema.properties), 'at', 'repeat'].sort())
    for (const [name, schema] of Object.entries(SendStatusBodySchema.properties)) assert.deepEqual(props[name], plain(schema), `post_status.${name}`)
    assert.deepEqual(post.inputSchema.required, ['sessionId', ...SendStatusBodySchema.required ?? []])
    const insights = tools.find((tool) => tool.name === 'read_insights')!.inputSchema.properties as Record<string, unknown>
    for (const [name, schema] of Object.entries(InsightsQuerySchema.properties)) assert.deepEqual(insights[name], plain(schema), `read_insights.${name}`)
    for (const tool of tools) assert.match(tool.description ?? '', /Scope: (read|send|manage)/, `${tool.name} names its scope`)
    assert.equal(tools.find((tool) => tool.name === 'list_sessions')!.annotations?.readOnlyHint, true)
  })

  await t.test('link_session without a number: the QR code comes as a PNG image; scanning it links the session', async () => {
    s.emu.createAccount(OWN)
    const result = await call(admin, 'link_session', { sessionId: SID, sessionName: 'Through MCP' })
    assert.notEqual(result.isError, true, JSON.stringify(result.content))
    const [info, image] = result.content
    assert.ok(info.type === 'text' && image?.type === 'image', `text then image: ${JSON.stringify(result.content).slice(0, 300)}`)
    assert.deepEqual({ ...JSON.parse(info.text), message: undefined }, { sessionId: SID, created: true, connected: false, status: 'connecting', authMethod: 'qrcode', message: undefined })
    assert.equal(image.mimeType, 'image/png')
    assert.deepEqual([...Buffer.from(image.data, 'base64').subarray(0, 4)], [0x89, 0x50, 0x4e, 0x47], 'a PNG')
    // the phone scans the image the assistant was given
    await s.emu.scan(OWN, `data:image/png;base64,${image.data}`)
    const sessions = await waitFor(async () => {
      const list = await data<Array<{ sessionId: string, connected: boolean, ownNumber: string | null, qrCodeShown: boolean }>>(admin, 'list_sessions')
      return list.find((x) => x.sessionId === SID && x.connected) !== undefined ? list : undefined
    }, 30_000, 'list_sessions to show the session connected', 250)
    assert.deepEqual(sessions.map((x) => [x.sessionId, x.connected, x.ownNumber, x.qrCodeShown]), [[SID, true, OWN, false]])
    // asked again: already linked, nothing created
    const again = await data(admin, 'link_session', { sessionId: SID })
    assert.deepEqual([again.created, again.connected, again.ownNumber], [false, true, OWN])
  })

  await t.test('link_session with a phone number: the pairing code as text; entering it links the session', async () => {
    s.emu.createAccount(PAIRED)
    const linked = await data<{ pairingCode: string, authMethod: string, phoneNumber: string }>(admin, 'link_session', { sessionId: 'mcp-pair', phoneNumber: PAIRED })
    assert.match(linked.pairingCode, /^[A-Z0-9]{8}$/)
    assert.deepEqual([linked.authMethod, linked.phoneNumber], ['pairing', PAIRED])
    await s.emu.enterCode(PAIRED, linked.pairingCode)
    await waitFor(async () => (await data<Array<{ sessionId: string, connected: boolean }>>(admin, 'list_sessions')).some((x) => x.sessionId === 'mcp-pair' && x.connected),
      30_000, 'the paired session to connect', 250)
  })

  let statusId = ''
  let platformMessageId = ''
  await t.test('post_status (text): the emulator\'s recipients decrypt it', async () => {
    const sent = await data<{ statusId: string, platformMessageId: string, state: string, contactCount: number }>(admin, 'post_status', {
      sessionId: SID, type: 'text', content: 'posted by an assistant', targetNumbers: `${A},${B}`
    })
    assert.deepEqual([sent.state, sent.contactCount], ['sent', 2])
    ;({ statusId, platformMessageId } = sent)
    const record = await settledPost(s, platformMessageId)
    assert.equal(record.text, 'posted by an assistant')
    assert.deepEqual([...record.recipients].sort(), [OWN, A, B].sort())
    for (const number of [A, B]) assert.ok(record.deliveries.some((d) => d.number === number && d.decrypted), `${number} decrypted it`)
  })

  await t.test('post_status (image by URL): fetched by the service, posted as an image', async () => {
    const files = await serveFiles(t, { '/dot.png': { type: 'image/png', body: png() } })
    const sent = await data<{ platformMessageId: string, state: string }>(admin, 'post_status', {
      sessionId: SID, type: 'url', content: files.url('/dot.png'), caption: 'a dot', targetNumbers: A
    })
    assert.equal(sent.state, 'sent')
    const record = await settledPost(s, sent.platformMessageId)
    assert.deepEqual([record.type, record.caption], ['image', 'a dot'])
    assert.ok(record.deliveries.some((d) => d.number === A && d.decrypted))
  })

  await t.test('post_status with `at`: a schedule', async () => {
    const at = new Date(Date.now() + 3_600_000).toISOString()
    const scheduled = await data<{ scheduled: boolean, id: string, nextRunAt: string }>(admin, 'post_status', { sessionId: SID, type: 'text', content: 'later', targetNumbers: A, at })
    assert.equal(scheduled.scheduled, true)
    assert.match(scheduled.id, /^sch_/)
    assert.equal(Date.parse(scheduled.nextRunAt), Date.parse(at))
    assert.match(await failure(admin, 'post_status', { sessionId: SID, type: 'text', content: 'x', repeat: { every: 1, unit: 'days' } }), /`repeat` needs `at`/)
  })

  await t.test('list_sent_statuses: a view arrives, and the status lists its viewer', async () => {
    await s.emu.sendView(platformMessageId, { viewer: A, type: 'read', via: 'pn' })
    await s.events.next('status-viewers-added', (e) => e.statusId === statusId)
    const listed = await data<{ total: number, statuses: Array<{ id: string, viewerCount: number, viewers: Array<{ number: string }> }> }>(admin, 'list_sent_statuses', { sessionId: SID })
    assert.equal(listed.total, 2)
    const mine = listed.statuses.find((x) => x.id === statusId)
    assert.deepEqual(mine && [mine.viewerCount, mine.viewers.map((v) => v.number)], [1, [A]])
    const one = await data<{ status: { id: string }, viewers: Array<{ number: string }>, reactions: unknown[], replies: unknown[] }>(admin, 'list_sent_statuses', { sessionId: SID, statusId })
    assert.deepEqual([one.status.id, one.viewers.map((v) => v.number), one.reactions, one.replies], [statusId, [A], [], []])
  })

  await t.test('read_insights and read_contact_insights: the figures count the posts and the view', async () => {
    const insights = await data<{ totals: { statuses: number, viewed: number } }>(admin, 'read_insights', { sessionId: SID, tz: 'Europe/Berlin' })
    assert.deepEqual([insights.totals.statuses, insights.totals.viewed], [2, 1])
    const contacts = await data<{ items: Array<{ number: string, viewed: number }> }>(admin, 'read_contact_insights', { sessionId: SID, sort: 'viewed' })
    assert.deepEqual(contacts.items[0] && [contacts.items[0].number, contacts.items[0].viewed], [A, 1])
  })

  await t.test("read_contact_statuses: a contact's status, as the service received it", async () => {
    const contact = s.emu.addContact({ number: C })
    await s.emu.postContactStatus(OWN, { from: C, text: 'from a contact' })
    const page = await waitFor(async () => {
      const got = await data<{ statuses: Array<{ lid: string | null, text: string | null }> }>(admin, 'read_contact_statuses', { sessionId: SID, limit: 10 })
      return got.statuses.length > 0 ? got : undefined
    }, 15_000, "the contact's status to be listed", 250)
    // the platform names the poster by LID (a migrated contact)
    assert.deepEqual(page.statuses.map((x) => [x.lid, x.text]), [[`${contact.lid}@lid`, 'from a contact']])
  })

  await t.test('errors: the service\'s message as a tool error (a read-only key may not post; an unknown session), bad arguments checked against the schema', async () => {
    assert.equal(await failure(reader, 'post_status', { sessionId: SID, type: 'text', content: 'not allowed' }), 'This key lacks the send scope (HTTP 403)')
    const seen = await data<Array<{ sessionId: string }>>(reader, 'list_sessions')
    assert.deepEqual(seen.map((x) => x.sessionId), [SID], 'a scoped key sees its own sessions only')
    assert.equal(await failure(admin, 'list_sent_statuses', { sessionId: 'nobody' }), 'Session not found (HTTP 404)')
    assert.match(await failure(admin, 'post_status', { sessionId: SID, type: 'sticker', content: 'x' }), /^Invalid arguments for post_status: .*type/)
    assert.match(await failure(admin, 'read_insights', { sessionId: SID, colour: 'red' }), /additional properties/)
    await assert.rejects(admin.client.callTool({ name: 'no_such_tool', arguments: {} }), /Unknown tool: no_such_tool/)
  })

  await t.test('link_session after a logout from the phone: a fresh pairing code, or a restart with a new QR image', async () => {
    for (const number of [PAIRED, OWN]) s.emu.fault(number, 'logout')
    for (const sessionId of ['mcp-pair', SID]) await s.events.next('connection-status', (e) => e.sessionId === sessionId && e.status === 'logged-out', 15_000)
    const paired = await data<{ restarted: boolean, pairingCode: string }>(admin, 'link_session', { sessionId: 'mcp-pair' })
    assert.equal(paired.restarted, true)
    assert.match(paired.pairingCode, /^[A-Z0-9]{8}$/)
    await s.emu.enterCode(PAIRED, paired.pairingCode)
    const qr = await call(admin, 'link_session', { sessionId: SID })
    const [info, image] = qr.content
    assert.ok(info.type === 'text' && image?.type === 'image', `text then image: ${JSON.stringify(qr.content).slice(0, 300)}`)
    assert.equal(JSON.parse(info.text).restarted, true)
    await s.emu.scan(OWN, `data:image/png;base64,${image.data}`)
    await waitFor(async () => {
      const list = await data<Array<{ sessionId: string, connected: boolean }>>(admin, 'list_sessions')
      return list.filter((x) => x.connected).length === 2
    }, 30_000, 'both sessions linked again', 250)
  })

  await t.test('stdout carries only the protocol, and the key is never written', () => {
    assert.deepEqual(admin.transportErrors, [], 'every line on stdout was a protocol message')
    assert.deepEqual(reader.transportErrors, [])
    assert.match(admin.stderr(), /status-tracker MCP .*calling http:\/\/127\.0\.0\.1:/)
    for (const [mcp, key] of [[admin, TEST_API_KEY], [reader, readerKey]] as const) assert.ok(!mcp.stderr().includes(key), 'no key on stderr')
  })

  await t.test('docs/mcp.md lists every tool with the scope it needs', () => {
    const doc = readFileSync(join(ROOT, 'docs/mcp.md'), 'utf8')
    for (const name of TOOLS) assert.match(doc, new RegExp(`^\\| \`${name}\` \\|.*\\b(read|send|manage)\\b`, 'm'), `a row for ${name}`)
  })
})

test('without a key, or with a URL that does not parse, the server stops at once and says why on stderr', async () => {
  const run = async (env: Record<string, string>) => await new Promise<{ code: number | null, stdout: string, stderr: string }>((resolve) => {
    const child = execFile(process.execPath, nodeArgs('mcp/main.ts'), { cwd: ROOT, env: { ...process.env, STATUS_TRACKER_API_KEY: '', ...env } }, (_err, stdout, stderr) => {
      resolve({ code: child.exitCode, stdout, stderr })
    })
  })
  const noKey = await run({})
  assert.deepEqual([noKey.code, noKey.stdout], [2, ''])
  assert.match(noKey.stderr, /set STATUS_TRACKER_API_KEY/)
  const badUrl = await run({ STATUS_TRACKER_API_KEY: 'k'.repeat(32), STATUS_TRACKER_URL: 'not a url' })
  assert.equal(badUrl.code, 2)
  assert.match(badUrl.stderr, /STATUS_TRACKER_URL is not a URL: not a url/)
  assert.ok(!badUrl.stderr.includes('k'.repeat(32)), 'the key is not written')
})
