import assert from 'node:assert/strict'
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test, type TestContext } from 'node:test'
import { fetchRemoteMedia, RemoteFetchError, type RemoteFetchOptions } from '../../src/media/remote-fetch.js'
import { nonPublicRange } from '../../src/net/address-ranges.js'
import { build } from '../helper.js'
import { harness } from '../statuses/harness.js'
import { jpeg, mp4, png } from '../uploads/fixtures.js'
import { dbOf } from '../support/db.js'

// Issue 12, point 4: `url` statuses are fetched by the server through a guard. Everything here is served
// from loopback; loopback stands for "private" (refused by default) or, through the test-only isRefused
// seam, for "public" so that redirects and DNS answers can be checked with real connections.

type Handler = (req: IncomingMessage, res: ServerResponse) => void

async function serve (t: TestContext, handler: Handler, host = '127.0.0.1'): Promise<{ base: string, port: number, hits: string[] }> {
  const hits: string[] = []
  const server = createServer((req, res) => { hits.push(req.url ?? ''); handler(req, res) })
  await new Promise<void>((resolve) => server.listen(0, host, resolve))
  t.after(async () => { server.closeAllConnections(); await new Promise((resolve) => server.close(resolve)) })
  const { port } = server.address() as AddressInfo
  return { base: `http://${host.includes(':') ? `[${host}]` : host}:${port}`, port, hits }
}

function tempDir (t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'st-ssrf-'))
  t.after(() => { rmSync(dir, { recursive: true, force: true }) })
  return dir
}

async function rejectsWith (p: Promise<unknown>, kind: 'refused' | 'failed', message: RegExp): Promise<void> {
  await assert.rejects(p, (err: unknown) => {
    assert.ok(err instanceof RemoteFetchError, String(err))
    assert.equal(err.kind, kind, err.message)
    assert.match(err.message, message)
    return true
  })
}

test('ssrf: loopback, private, link-local, unique-local and mapped addresses are classified non-public', () => {
  const nonPublic = [
    '127.0.0.1', '127.255.255.254', '10.0.0.1', '10.255.255.255', '172.16.0.1', '172.31.255.255', '192.168.0.1', '192.168.255.255',
    '169.254.169.254', '169.254.0.1', '0.0.0.0', '0.1.2.3', '100.64.0.1', '224.0.0.1', '255.255.255.255', '198.18.0.1',
    '::1', '::', '[::1]', 'fc00::1', 'fd12:3456:789a::1', 'fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'fe80::1', 'fe80::1%eth0', 'febf::1',
    '::ffff:127.0.0.1', '::ffff:7f00:1', '0:0:0:0:0:ffff:7f00:0001', '::ffff:10.0.0.1', '::ffff:192.168.1.1', '::ffff:169.254.169.254',
    '64:ff9b::7f00:1', '2002:7f00:1::', '2002:c0a8:101::1', '::127.0.0.1', 'ff02::1', '2001:db8::1'
  ]
  for (const a of nonPublic) assert.notEqual(nonPublicRange(a), null, a)
  const publicOnes = ['8.8.8.8', '1.1.1.1', '172.32.0.1', '172.15.255.255', '192.169.0.1', '11.0.0.1', '100.128.0.1', '169.255.0.1',
    '2001:4860:4860::8888', '2606:4700::1111', '::ffff:8.8.8.8', '64:ff9b::808:808', '2002:808:808::1', 'fbff::1', 'fec0::1'.replace('fec0', '2a00')]
  for (const a of publicOnes) assert.equal(nonPublicRange(a), null, a)
  assert.match(nonPublicRange('::ffff:127.0.0.1') ?? '', /loopback.*IPv4-mapped/)
  assert.match(nonPublicRange('fe80::1') ?? '', /link-local/)
  assert.match(nonPublicRange('fd00::1') ?? '', /unique-local/)
})

test('ssrf: the guard refuses loopback (by IP and by name) unless private URLs are allowed', async (t) => {
  const dir = tempDir(t)
  const web = await serve(t, (_req, res) => { res.writeHead(200, { 'content-type': 'image/png' }).end(png()) })
  const v6 = await serve(t, (_req, res) => { res.writeHead(200, { 'content-type': 'image/png' }).end(png()) }, '::1')
  const opts: RemoteFetchOptions = { dir, maxBytes: 1024 * 1024, allowPrivate: false }
  await rejectsWith(fetchRemoteMedia(new URL(`${web.base}/a.png`), 'image', opts), 'refused', /127\.0\.0\.1 is a loopback address/)
  await rejectsWith(fetchRemoteMedia(new URL(`http://localhost:${web.port}/a.png`), 'image', opts), 'refused', /localhost resolves to a loopback address \(127\.0\.0\.1\)/)
  await rejectsWith(fetchRemoteMedia(new URL(`${v6.base}/a.png`), 'image', opts), 'refused', /::1 is a loopback address/)
  await rejectsWith(fetchRemoteMedia(new URL(`http://[::ffff:127.0.0.1]:${web.port}/a.png`), 'image', opts), 'refused', /loopback \(IPv4-mapped\)/)
  await rejectsWith(fetchRemoteMedia(new URL(`http://0.0.0.0:${web.port}/a.png`), 'image', opts), 'refused', /unspecified/)
  await rejectsWith(fetchRemoteMedia(new URL(`http://2130706433:${web.port}/a.png`), 'image', opts), 'refused', /loopback/)
  for (const url of ['http://10.1.2.3/a.png', 'http://172.20.0.1/a.png', 'http://192.168.1.1/a.png', 'http://169.254.169.254/latest/a.png', 'http://[fc00::1]/a.png', 'http://[fe80::1]/a.png']) {
    await rejectsWith(fetchRemoteMedia(new URL(url), 'image', opts), 'refused', /address/)
  }
  await rejectsWith(fetchRemoteMedia(new URL('ftp://example.com/a.png'), 'image', opts), 'refused', /http and https/)
  await rejectsWith(fetchRemoteMedia(new URL(`http://user:pw@127.0.0.1:${web.port}/a.png`), 'image', { ...opts, allowPrivate: true }), 'refused', /credentials/)
  assert.deepEqual([web.hits, v6.hits], [[], []], 'nothing was requested')
  assert.deepEqual(readdirSync(dir), [], 'no file left behind')

  const ok = await fetchRemoteMedia(new URL(`${web.base}/a.png`), 'image', { ...opts, allowPrivate: true })
  assert.equal(ok.type.mimeType, 'image/png')
  assert.equal(ok.size, png().length)
  assert.equal(statSync(ok.path).mode & 0o777, 0o600)
  await ok.remove()
  assert.ok(!existsSync(ok.path))
  const ok6 = await fetchRemoteMedia(new URL(`${v6.base}/a.png`), 'image', { ...opts, allowPrivate: true })
  await ok6.remove()
})

test('ssrf: redirects are checked hop by hop; DNS answers are all checked and the connection pinned to one', async (t) => {
  const dir = tempDir(t)
  // 127.0.0.1 plays a public server; 127.0.0.2 (also loopback) plays an internal one
  const isRefused = (a: string) => a === '127.0.0.1' ? null : nonPublicRange(a)
  // names resolve through this stand-in for DNS
  const names: Record<string, string[]> = { 'internal.test': ['127.0.0.2'], 'mixed.test': ['127.0.0.1', '10.0.0.7'], 'pinned.test': ['127.0.0.1'] }
  const resolve = async (host: string) => (names[host] ?? []).map((address) => ({ address, family: 4 }))
  const opts: RemoteFetchOptions = { dir, maxBytes: 1024 * 1024, allowPrivate: false, isRefused, resolve }
  const internal = await serve(t, (_req, res) => { res.writeHead(200, { 'content-type': 'image/png' }).end(png()) }, '127.0.0.2')
  const hostHeaders: string[] = []
  const web = await serve(t, (req, res) => {
    hostHeaders.push(req.headers.host ?? '')
    const to: Record<string, string> = {
      '/to-internal.png': `${internal.base}/secret.png`,
      '/to-name.png': `http://internal.test:${internal.port}/secret.png`,
      '/to-metadata.png': 'http://169.254.169.254/latest/meta-data.png',
      '/to-v6.png': 'http://[::1]/x.png',
      '/to-file.png': 'file:///etc/passwd',
      '/loop.png': '/loop.png',
      '/relative.png': '/real.png'
    }
    if (req.url === '/real.png') { res.writeHead(200).end(png()); return }
    res.writeHead(302, { location: to[req.url ?? ''] ?? '/nowhere' }).end()
  })
  await rejectsWith(fetchRemoteMedia(new URL(`${web.base}/to-internal.png`), 'image', opts), 'refused', /127\.0\.0\.2 is a loopback address/)
  await rejectsWith(fetchRemoteMedia(new URL(`${web.base}/to-name.png`), 'image', opts), 'refused', /internal\.test resolves to a loopback address \(127\.0\.0\.2\)/)
  await rejectsWith(fetchRemoteMedia(new URL(`${web.base}/to-metadata.png`), 'image', opts), 'refused', /link-local/)
  await rejectsWith(fetchRemoteMedia(new URL(`${web.base}/to-v6.png`), 'image', opts), 'refused', /::1 is a loopback/)
  await rejectsWith(fetchRemoteMedia(new URL(`${web.base}/to-file.png`), 'image', opts), 'refused', /http and https/)
  await rejectsWith(fetchRemoteMedia(new URL(`${web.base}/loop.png`), 'image', opts), 'failed', /too many redirects/)
  assert.deepEqual(internal.hits, [], 'the internal server was never reached')
  const followed = await fetchRemoteMedia(new URL(`${web.base}/relative.png`), 'image', opts)
  assert.equal(followed.finalUrl, `${web.base}/real.png`)
  await followed.remove()

  // a name whose answers include a private address is refused, even when the first one is fine
  await rejectsWith(fetchRemoteMedia(new URL(`http://mixed.test:${web.port}/real.png`), 'image', opts), 'refused', /mixed\.test resolves to a private \(10\/8\) address \(10\.0\.0\.7\)/)
  // the connection goes to the address that was checked: this name exists nowhere but in our resolver
  // (a second lookup by the HTTP client would fail), and the Host header keeps the name
  const pinned = await fetchRemoteMedia(new URL(`http://pinned.test:${web.port}/real.png`), 'image', opts)
  await pinned.remove()
  assert.equal(hostHeaders.at(-1), `pinned.test:${web.port}`)
  assert.deepEqual(readdirSync(dir), [])
})

test('ssrf: size cap while streaming, sniffed content must match the URL, remote failures and timeouts', async (t) => {
  const dir = tempDir(t)
  const opts: RemoteFetchOptions = { dir, maxBytes: 64 * 1024, allowPrivate: true, totalTimeoutMs: 1500 }
  const web = await serve(t, (req, res) => {
    switch (req.url) {
      case '/big-declared.png': res.writeHead(200, { 'content-length': String(10 * 1024 * 1024) }); res.write(png()); break
      case '/big-chunked.png': {
        res.writeHead(200, { 'content-type': 'image/png' })
        const chunk = Buffer.concat([png(), Buffer.alloc(16 * 1024)])
        let sent = 0
        const pump = () => { while (sent < 2 * 1024 * 1024 && res.write(chunk)) sent += chunk.length; if (sent < 2 * 1024 * 1024) res.once('drain', pump); else res.end() }
        pump()
        break
      }
      case '/page.png': res.writeHead(200, { 'content-type': 'image/png' }).end('<html><body>not an image</body></html>'.repeat(20)); break
      case '/video.png': res.writeHead(200).end(mp4(4096)); break
      case '/photo.mp4': res.writeHead(200).end(jpeg()); break
      case '/empty.png': res.writeHead(200).end(); break
      case '/missing.png': res.writeHead(404).end('nope'); break
      case '/error.png': res.writeHead(500).end(); break
      case '/hang.png': res.writeHead(200); res.write(png().subarray(0, 10)); break
      case '/silent.png': break
      case '/cut.png': res.writeHead(200, { 'content-length': '5000' }); res.end(png()); req.socket.destroy(); break
      case '/clip.mp4': res.writeHead(200).end(mp4(4096)); break
      default: res.writeHead(404).end()
    }
  })
  const get = async (path: string, kind: 'image' | 'video' = 'image') => await fetchRemoteMedia(new URL(`${web.base}${path}`), kind, opts)
  await rejectsWith(get('/big-declared.png'), 'refused', /larger than/)
  await rejectsWith(get('/big-chunked.png'), 'refused', /larger than/)
  await rejectsWith(get('/page.png'), 'refused', /not an image$/)
  await rejectsWith(get('/video.png'), 'refused', /not an image \(it is video\/mp4\)/)
  await rejectsWith(get('/photo.mp4', 'video'), 'refused', /not a video \(it is image\/jpeg\)/)
  await rejectsWith(get('/empty.png'), 'refused', /no content/)
  await rejectsWith(get('/missing.png'), 'failed', /HTTP 404/)
  await rejectsWith(get('/error.png'), 'failed', /HTTP 500/)
  const started = Date.now()
  await rejectsWith(get('/hang.png'), 'failed', /no complete answer within/)
  await rejectsWith(get('/silent.png'), 'failed', /no complete answer within/)
  assert.ok(Date.now() - started < 6000, 'the total timeout holds')
  await rejectsWith(get('/cut.png'), 'failed', /closed the connection|reset|connection/)
  await rejectsWith(fetchRemoteMedia(new URL('http://127.0.0.1:9/a.png'), 'image', opts), 'failed', /refused/)
  await rejectsWith(fetchRemoteMedia(new URL('http://does-not-exist.invalid/a.png'), 'image', { ...opts, resolve: async () => { throw Object.assign(new Error('nx'), { code: 'ENOTFOUND' }) } }), 'failed', /could not be resolved/)
  assert.deepEqual(readdirSync(dir), [], 'every failure removed its temporary file')
  const video = await get('/clip.mp4', 'video')
  assert.equal(video.type.kind, 'video')
  await video.remove()
})

test('ssrf: the API answers 400 for refused URLs and 502 for failing remotes, and only fetches when allowed', async (t) => {
  const served = { png: png() }
  let hits = 0
  const handler: Handler = (req, res) => {
    hits++
    if (req.url === '/a.png') res.writeHead(200).end(served.png)
    else if (req.url === '/big.png') res.writeHead(200).end(Buffer.concat([png(), Buffer.alloc(2 * 1024 * 1024)]))
    else if (req.url === '/page.png') res.writeHead(200).end('<html></html>')
    else res.writeHead(404).end()
  }
  const web = await serve(t, handler)
  // the real app, no platform: refusals come before the connection check
  const { api } = await build(t)
  await api({ method: 'POST', url: '/api/sessions', payload: { sessionId: 's1', sessionName: 'S', authMethod: 'qrcode' } })
  for (const content of [`${web.base}/a.png`, `http://[::1]:${web.port}/a.png`, `http://[::ffff:127.0.0.1]:${web.port}/a.png`, 'http://169.254.169.254/a.jpg', 'http://10.0.0.1/v.mp4', 'http://0.0.0.0/a.png', 'http://[fd00::1]/a.png']) {
    const res = await api({ method: 'POST', url: '/api/sessions/s1/send-status', payload: { type: 'url', content } })
    assert.equal(res.statusCode, 400, `${content}: ${res.body}`)
    assert.match(res.json<{ error: string }>().error, /^URL refused: .* address/)
  }
  assert.equal(hits, 0)

  // a connected session (platform stand-in): refused, remote failures, oversize, wrong content, success
  const loose = await harness(t, { ALLOW_PRIVATE_URLS: 'true', MAX_UPLOAD_MB: '1' })
  const strict = await harness(t)
  await loose.addSession('s1')
  await strict.addSession('s1')
  const send = async (h: typeof loose, content: string) => await h.app.statuses.send('s1', { type: 'url', content }).then(() => ({ statusCode: 200, message: '' }), (err: { statusCode: number, message: string }) => err)
  const refusedByName = await send(strict, `http://localhost:${web.port}/a.png`)
  assert.equal(refusedByName.statusCode, 400)
  assert.match(refusedByName.message, /^URL refused: localhost resolves to a loopback address/)
  assert.equal(hits, 0, 'refused before any request')
  assert.equal((await send(loose, `${web.base}/a.png`)).statusCode, 200)
  const missing = await send(loose, `${web.base}/missing.png`)
  assert.deepEqual([missing.statusCode, missing.message], [502, 'Fetching the URL failed: the server answered HTTP 404'])
  const dead = await send(loose, 'http://127.0.0.1:9/a.png')
  assert.deepEqual([dead.statusCode, dead.message], [502, 'Fetching the URL failed: the connection was refused'])
  const big = await send(loose, `${web.base}/big.png`)
  assert.deepEqual([big.statusCode, big.message], [400, 'URL refused: the media is larger than 1 MB'])
  const page = await send(loose, `${web.base}/page.png`)
  assert.deepEqual([page.statusCode, page.message], [400, 'URL refused: the content at the URL is not an image'])
  const rows = await dbOf(loose.app).db.selectFrom('statuses').select(['type', 'content']).execute()
  assert.deepEqual(rows, [{ type: 'url', content: `${web.base}/a.png` }], 'failed fetches leave no row; the URL is what is stored')
  assert.deepEqual(readdirSync(loose.uploadDir), [], 'no temporary file left')
})
