import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { createServer, type Server } from 'node:http'
import { once } from 'node:events'
import { listensOn, spawnService } from '../support/service.js'

// The kit's readiness check counts a health answer only from its own child (test/support/service.ts listensOn).

async function listen (server: Server): Promise<number> {
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const address = server.address()
  if (address === null || typeof address === 'string') throw new Error('no port')
  return address.port
}

test('listensOn tells which process holds a listening port', async (t) => {
  const server = createServer()
  const port = await listen(server)
  t.after(() => { server.close() })
  const other = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 10000)'], { stdio: 'ignore' })
  t.after(() => { other.kill() })
  assert.equal(listensOn(process.pid, port), true)
  assert.equal(listensOn(other.pid ?? -1, port), false)
  server.close()
  await once(server, 'close')
  assert.equal(listensOn(process.pid, port), false, 'nothing listens there any more')
  // a process that is gone (a child that died on EADDRINUSE before its exit was seen) holds nothing
  other.kill()
  await once(other, 'exit')
  const again = createServer()
  const port2 = await listen(again)
  t.after(() => { again.close() })
  assert.equal(listensOn(other.pid ?? -1, port2), false)
})

test('a service whose port another server holds is not taken for started, even when that server answers its health poll', async (t) => {
  // what another test process's service would answer: 200 to GET /api/health with the kit's key
  const impostor = createServer((_req, res) => { res.writeHead(200, { 'content-type': 'application/json' }).end('{"success":true,"data":{"status":"ok"}}') })
  const port = await listen(impostor)
  t.after(() => { impostor.close() })
  await assert.rejects(spawnService({ port, t, readyTimeoutMs: 30_000 }), /exited|not ready/)
})
