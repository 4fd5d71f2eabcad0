import { Type, type Static } from '@sinclair/typebox'
import { Nullable } from './common.js'
import { AuthMethodSchema, ConnectionStatusSchema } from './session.js'
import { ReactionSchema, ReplySchema, StatusTypeSchema, ViewerSchema } from './status.js'
import { ContactStatusSchema } from './contact-statuses.js'

// Payloads of every socket.io event the server emits. They are documented in the OpenAPI document
// (components) and typed for the broadcaster, the one place that emits.

const SessionId = Type.String()

export const EventSchemas = {
  'connection-status': Type.Object({ sessionId: SessionId, connected: Type.Boolean(), status: ConnectionStatusSchema, ownNumber: Type.Optional(Nullable(Type.String())), reason: Type.Optional(Type.String()) }),
  'pairing-code': Type.Object({ sessionId: SessionId, pairingCode: Type.String(), phoneNumber: Type.String(), authMethod: AuthMethodSchema }),
  'pairing-code-error': Type.Object({ sessionId: SessionId, error: Type.String() }),
  'qr-code': Type.Object({ sessionId: SessionId, qrCode: Type.String({ description: 'PNG data URL' }), authMethod: AuthMethodSchema }),
  'qr-code-error': Type.Object({ sessionId: SessionId, error: Type.String() }),
  'status-sent': Type.Object({ sessionId: SessionId, statusId: Type.String(), id: Type.String(), type: StatusTypeSchema, content: Type.String(), caption: Type.String(), timestamp: Type.String(), platformMessageId: Type.String(), contactCount: Type.Integer() }),
  'status-send-progress': Type.Object({ sessionId: SessionId, statusId: Type.String(), sent: Type.Integer(), total: Type.Integer() }),
  'status-viewers-update': Type.Object({ sessionId: SessionId, statusId: Type.String(), viewers: Type.Array(ViewerSchema) }),
  'status-viewers-added': Type.Object({
    sessionId: SessionId,
    statusId: Type.String(),
    viewers: Type.Array(ViewerSchema, { description: 'Only the viewers that are new since the last status-viewers-added of this status, first view first' }),
    viewerCount: Type.Integer({ description: "The status's viewers now, own devices not counted (as viewerCount in sent-statuses)" })
  }),
  'status-reaction': Type.Object({
    sessionId: SessionId,
    statusId: Type.String(),
    reaction: ReactionSchema,
    removed: Type.Optional(Type.Literal(true, { description: 'The contact took the reaction back (`reaction.emoji` is empty)' }))
  }),
  'status-reply': Type.Object({ sessionId: SessionId, statusId: Type.String(), reply: ReplySchema }),
  'status-deleted': Type.Object({ sessionId: SessionId, statusId: Type.String() }),
  'contact-status': Type.Object({ sessionId: SessionId, status: ContactStatusSchema }, { description: "One of the account's contacts posted a status (GET …/contact-statuses lists them)" }),
  'contact-status-mention': Type.Object({ sessionId: SessionId, status: ContactStatusSchema }, { description: "A contact's status mentions the account (`status.mentionsMe`); follows its `contact-status` event" }),
  'statuses-updated': Type.Object({ sessionId: SessionId, message: Type.Optional(Type.String()), action: Type.Optional(Type.String({ description: "Emitted whenever a session's sent-statuses list changes. 'sent' when a send ended with every recipient it could reach (besides status-sent); 'deleted' after delete-status (besides status-deleted); 'cleanup' after expiry; 'insights-cleanup' when insights summaries past INSIGHTS_RETENTION_DAYS were removed (the list itself is unchanged); 'failed' when the platform rejected a status; 'partial' when a send stopped part-way (the status is kept as partial); 'send-failed' when a send stopped before anyone had it (the status is removed); 'unreachable' when recipients of a send have no LID and were not sent to (listed in `unreachable`)" })), statusId: Type.Optional(Type.String()), unreachable: Type.Optional(Type.Array(Type.String(), { description: "action 'unreachable': the recipient numbers the status was not sent to" })) }),
  'scheduled-status-fired': Type.Object({
    sessionId: SessionId,
    scheduleId: Type.String(),
    statusId: Type.String({ description: 'The status the run posted (its own events follow: status-send-progress, status-sent)' }),
    at: Type.String({ description: 'The run\'s due time (ISO 8601)' }),
    firedAt: Type.String(),
    late: Type.Boolean({ description: 'Fired more than 5 seconds after its time (restart, failover, deferral), within SCHEDULE_GRACE_MS' })
  }),
  'scheduled-status-failed': Type.Object({
    sessionId: SessionId,
    scheduleId: Type.String(),
    at: Type.String({ description: 'The run\'s due time (ISO 8601)' }),
    state: Type.Union([Type.Literal('failed'), Type.Literal('missed')], { description: "'failed': its send failed; 'missed': due more than SCHEDULE_GRACE_MS ago while no node could fire it" }),
    statusId: Type.Optional(Type.String({ description: 'When the status was recorded before its send failed' })),
    error: Type.String()
  }),
  'session-created': Type.Object({ sessionId: SessionId, sessionName: Type.String(), phoneNumber: Nullable(Type.String()), authMethod: AuthMethodSchema, createdAt: Type.String() }),
  'session-deleted': Type.Object({ sessionId: SessionId })
} as const

export type EventName = keyof typeof EventSchemas
export type EventPayloads = { [K in EventName]: Static<(typeof EventSchemas)[K]> }
