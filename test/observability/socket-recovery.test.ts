import { test } from 'node:test'
import assert from 'node:assert/strict'
import { io as connect, type Socket } from 'socket.io-client'
import { build, TEST_API_KEY, waitFor } from '../helper.js'

async function connected (socket: Socket): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => { reject(new Error('socket.io connect timed out')) }, 5000)
    socket.once('connect', () => { clearTimeout(timer); resolve() })
    socket.once('connect_error', (err) => { clearTimeout(timer); reject(err) })
  })
}

test('connection state recovery: a client that comes back within two minutes gets the events it missed', async (t) => {
  const { app, listen } = await build(t)
  const url = await listen()
  const socket = connect(url, { auth: { apiKey: TEST_API_KEY }, transports: ['websocket'], reconnection: false, forceNew: true })
  t.after(() => { socket.close() })
  const received: Array<{ sessionId: string }> = []
  socket.on('session-deleted', (p: { sessionId: string }) => { received.push(p) })
  await connected(socket)
  assert.equal(socket.recovered, false, 'a first connection has nothing to recover')

  app.domainEvents.emit('session-deleted', { sessionId: 'before' })
  await waitFor(() => received.length === 1, 5000, 'the first event')

  // cut the underlying connection as a network drop would, and wait until the server has noticed
  socket.io.engine.close()
  await waitFor(() => app.io.of('/').sockets.size === 0, 5000, 'the server to see the disconnect')
  app.domainEvents.emit('session-deleted', { sessionId: 'missed-1' })
  app.domainEvents.emit('session-deleted', { sessionId: 'missed-2' })

  socket.connect()
  await connected(socket)
  assert.equal(socket.recovered, true, 'the session was recovered')
  await waitFor(() => received.length === 3, 5000, 'the missed events')
  assert.deepEqual(received.map((p) => p.sessionId), ['before', 'missed-1', 'missed-2'])

  // and live events keep flowing on the recovered connection
  app.domainEvents.emit('session-deleted', { sessionId: 'after' })
  await waitFor(() => received.length === 4, 5000, 'a live event after recovery')
})

test('connection state recovery still checks the key: a recovering handshake without it is refused', async (t) => {
  const { app, listen } = await build(t)
  const url = await listen()
  const auth: { apiKey: string } = { apiKey: TEST_API_KEY }
  const socket = connect(url, { auth, transports: ['websocket'], reconnection: false, forceNew: true })
  t.after(() => { socket.close() })
  await connected(socket)
  socket.io.engine.close()
  await waitFor(() => app.io.of('/').sockets.size === 0, 5000, 'the server to see the disconnect')
  auth.apiKey = 'not-the-key-not-the-key'
  socket.connect()
  await assert.rejects(connected(socket), /Unauthorized/)
})
