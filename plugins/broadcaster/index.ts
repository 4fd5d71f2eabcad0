import fp from 'fastify-plugin'
import type { EventPayloads } from '../../schemas/events.js'
import type { EphemeralEventName, LogEntry } from '../events/log.js'
import { attachReplay, payloadOf, REPLAYING_ROOM } from '../events/replay.js'
import { connectionStatusPayload } from '../platform/session-links.js'
import { emitToSession, ROOM_ALL, sessionAudience } from './rooms.js'
import { admitSockets } from './subscriptions.js'

/**
 * The one place events leave the service. Events that report a change are in the event log
 * (docs/events-log.md): they reach socket.io from the log's feed after their commit, with their eventId
 * (webhook deliveries are made from the log by the webhook dispatcher). Codes (QR, pairing) are not logged:
 * they go to socket.io and webhooks as they come. socket.io sends each event to the clients that listen to
 * its session (rooms.ts).
 */
export default fp(async (app) => {
  admitSockets(app)
  // a log shared by several nodes: every node's feed sees every node's events and gives them to its own
  // clients; else one writer, whose emits reach other instances' clients through the adapter (Redis)
  const shared = app.stores.events.shared
  /** every logged event goes to socket.io here, `{ ...payload, eventId }` (sockets catching up get it from the log) */
  const emitLogged = (entry: LogEntry): void => {
    const from = shared ? app.io.local : app.io
    const audience = entry.sessionId === null ? from.to(ROOM_ALL) : sessionAudience(from, entry.sessionId)
    audience.except(REPLAYING_ROOM).emit(entry.type, payloadOf(entry))
  }
  app.eventLog.onEvent(emitLogged)
  attachReplay(app.io, app.eventLog, app.log.child({ plugin: 'event-replay' }))

  const ephemeral = <K extends EphemeralEventName>(event: K, payload: EventPayloads[K]): void => {
    app.webhooks.enqueue(event, payload)
    emitToSession(app.io, event, payload)
  }

  const { platform } = app
  platform.on('connection-status', (e) => {
    // open and logged-out are in the log already, written with the session row (platform/session-links.ts);
    // the other changes store nothing but the log's row, appended now (a client catching up ends on the
    // session's current state: docs/events-log.md)
    if (e.recorded === true) return
    app.eventLog.append('connection-status', connectionStatusPayload(e))
      .catch((err: unknown) => { app.log.error({ err }, 'writing connection-status to the event log failed') })
  })
  platform.on('pairing-code', (e) => {
    ephemeral('pairing-code', { sessionId: e.sessionId, pairingCode: e.pairingCode, phoneNumber: e.phoneNumber, authMethod: 'pairing' })
  })
  platform.on('pairing-code-error', (e) => { ephemeral('pairing-code-error', e) })
  // the platform offers QR codes to QR sessions only; pairing sessions get codes
  platform.on('qr-code', (e) => { ephemeral('qr-code', { sessionId: e.sessionId, qrCode: e.qrCode, authMethod: 'qrcode' }) })
  platform.on('qr-code-error', (e) => { ephemeral('qr-code-error', e) })
}, { name: 'broadcaster', dependencies: ['db', 'socket-io', 'auth', 'platform', 'domain-events', 'webhooks'] })
