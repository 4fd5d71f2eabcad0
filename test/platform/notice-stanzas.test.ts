import assert from 'node:assert/strict'
import { EventEmitter } from 'node:events'
import { test } from 'node:test'
import type { BinaryNode, WASocket } from '@whiskeysockets/baileys'
import { onClientExpiration, onRefreshLidAck } from '../../src/platform/baileys/notices.js'

// Which of the server's notice stanzas the service acts on (src/platform/baileys/notices.ts), read from the
// socket's `CB:` events the way rc14 emits them; the end-to-end path is test/platform/notices.test.ts.

const fakeSocket = (): { sock: WASocket, emit: (event: string, node: BinaryNode) => void } => {
  const ws = new EventEmitter()
  return { sock: { ws } as unknown as WASocket, emit: (event, node) => { ws.emit(`CB:${event}`, node) } }
}

test('a refresh_lid ack is acted on for a user (by number or LID), never for status@broadcast or a group', () => {
  const { sock, emit } = fakeSocket()
  const peers: string[] = []
  onRefreshLidAck(sock, (peer) => { peers.push(peer) })
  const ack = (from: string): BinaryNode => ({ tag: 'ack', attrs: { class: 'message', id: 'X', from, refresh_lid: 'true' } })
  for (const from of ['status@broadcast', '120363000000000000@g.us', '4915300000011@s.whatsapp.net', '100000000000001@lid']) emit('ack,refresh_lid:true', ack(from))
  assert.deepEqual(peers, ['4915300000011@s.whatsapp.net', '100000000000001@lid'])
})

test('a client expiration is read from <ib><client_expiration t/>; a t that is not a positive integer is ignored', () => {
  const { sock, emit } = fakeSocket()
  const dates: string[] = []
  onClientExpiration(sock, (at) => { dates.push(at.toISOString()) })
  const ib = (t?: string): BinaryNode => ({ tag: 'ib', attrs: { from: 's.whatsapp.net' }, content: [{ tag: 'client_expiration', attrs: t === undefined ? {} : { t } }] })
  for (const t of [undefined, 'soon', '-5', '0', '1.5', '1800000000']) emit('ib,,client_expiration', ib(t))
  assert.deepEqual(dates, [new Date(1_800_000_000_000).toISOString()])
})
