import fp from 'fastify-plugin'
import type { EventName, EventPayloads } from '../../schemas/events.js'
import { DOMAIN_EVENT_NAMES } from './domain-events.js'
import { emitToSession } from './rooms.js'

/**
 * The one place events leave the service: every domain event and every platform event clients see,
 * mapped to its payload in schemas/events.ts, goes to the webhook outbox and to socket.io (to the clients
 * that listen to its session: rooms.ts).
 */
export default fp(async (app) => {
  const toClients = <K extends EventName>(event: K, payload: EventPayloads[K]): void => {
    // the outbox first: its rows are committed before any socket.io client hears of the event
    app.webhooks.enqueue(event, payload)
    emitToSession(app.io, event, payload)
  }

  // domain events go out under their own name with their payload as is
  for (const event of DOMAIN_EVENT_NAMES) app.domainEvents.on(event, (payload) => { toClients(event, payload) })

  const { platform } = app
  platform.on('connection-status', (e) => {
    toClients('connection-status', { sessionId: e.sessionId, connected: e.connected, status: e.status, ownNumber: e.ownNumber, ...(e.reason !== undefined ? { reason: e.reason } : {}) })
  })
  platform.on('pairing-code', (e) => {
    toClients('pairing-code', { sessionId: e.sessionId, pairingCode: e.pairingCode, phoneNumber: e.phoneNumber, authMethod: 'pairing' })
  })
  platform.on('pairing-code-error', (e) => { toClients('pairing-code-error', e) })
  // the platform offers QR codes to QR sessions only; pairing sessions get codes
  platform.on('qr-code', (e) => { toClients('qr-code', { sessionId: e.sessionId, qrCode: e.qrCode, authMethod: 'qrcode' }) })
  platform.on('qr-code-error', (e) => { toClients('qr-code-error', e) })
}, { name: 'broadcaster', dependencies: ['socket-io', 'platform', 'domain-events', 'webhooks'] })
