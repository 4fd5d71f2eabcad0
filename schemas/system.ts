import { Type, type Static } from '@sinclair/typebox'
import { IsoDateSchema } from './common.js'

/** What a check shows when it threw or took longer than 2 s. */
const CheckFailedSchema = Type.Object({ error: Type.String() }, { title: 'CheckFailed' })

export const DatabaseCheckSchema = Type.Object({
  ok: Type.Boolean({ description: 'A query (`select 1`) succeeded' }),
  latencyMs: Type.Number({ description: 'Round trip of that query' }),
  error: Type.Optional(Type.String({ description: 'Why it failed' }))
}, { title: 'DatabaseCheck' })

export const SessionsCheckSchema = Type.Object({
  total: Type.Integer({ description: 'Stored sessions' }),
  connected: Type.Integer({ description: 'Status `open`' }),
  connecting: Type.Integer({ description: 'Status `connecting` (connecting or waiting for a link)' }),
  disconnected: Type.Integer({ description: 'Status `close` (waiting to reconnect, stopped, or never started)' }),
  loggedOut: Type.Integer({ description: 'Status `logged-out`: the account removed the device; link again' }),
  disconnectedTooLong: Type.Array(Type.String(), { description: 'Linked sessions not connected for longer than HEALTH_DISCONNECTED_MS; any makes the service degraded' })
}, { title: 'SessionsCheck' })

export const WebhooksCheckSchema = Type.Object({
  pending: Type.Integer({ description: 'Deliveries waiting for their next attempt' }),
  failing: Type.Integer({ description: 'Endpoints whose last attempt failed' })
}, { title: 'WebhooksCheck' })

export const BrokenAssumptionSchema = Type.Object({
  name: Type.String({ description: 'The assumption, as UPGRADING.md and src/platform/baileys/assumptions.ts name it' }),
  expects: Type.String({ description: 'What the service expects of the installed Baileys' }),
  source: Type.String({ description: 'The file of the installed package it comes from' })
}, { title: 'BrokenAssumption' })

export const PlatformCheckSchema = Type.Object({
  loaded: Type.Boolean({ description: 'The platform (Baileys) is loaded; it loads right after the server listens, and the other fields come with it' }),
  baileys: Type.Optional(Type.String({ description: 'Version of the installed Baileys' })),
  compatible: Type.Optional(Type.Boolean({ description: 'Every internal of Baileys the service relies on was found as expected at start; when false no session starts (their start answers 503) and the service is degraded' })),
  assumptions: Type.Optional(Type.Integer({ description: 'How many assumptions were checked (UPGRADING.md lists them)' })),
  broken: Type.Optional(Type.Array(BrokenAssumptionSchema, { description: 'The assumptions that do not hold; empty when compatible' })),
  clientExpiresAt: Type.Optional(Type.Union([IsoDateSchema, Type.Null()], { description: 'The earliest date a session running here was told the platform stops accepting this client build (`<ib><client_expiration>`); null when none' })),
  clientExpiresSoon: Type.Optional(Type.Boolean({ description: 'clientExpiresAt is less than CLIENT_EXPIRY_WARN_DAYS away (or past): the service is degraded; upgrade Baileys / WA_VERSION' }))
}, { title: 'PlatformCheck' })

export const HealthSchema = Type.Object({
  status: Type.Union([Type.Literal('healthy'), Type.Literal('degraded')], {
    description: '`degraded` when the database check fails, a linked session has been disconnected longer than ' +
      'HEALTH_DISCONNECTED_MS, the installed Baileys breaks an assumption the service relies on, or the platform announced it stops accepting the client build within CLIENT_EXPIRY_WARN_DAYS (see `checks`); the HTTP status stays 200 either way'
  }),
  timestamp: IsoDateSchema,
  uptime: Type.Number({ description: 'Seconds since the process started' }),
  version: Type.String(),
  checks: Type.Object({
    database: Type.Union([DatabaseCheckSchema, CheckFailedSchema]),
    sessions: Type.Union([SessionsCheckSchema, CheckFailedSchema]),
    platform: Type.Union([PlatformCheckSchema, CheckFailedSchema]),
    webhooks: Type.Optional(Type.Union([WebhooksCheckSchema, CheckFailedSchema], { description: 'Webhook deliveries waiting and endpoints failing (the service always reports it; a receiver that keeps failing never makes the service degraded)' }))
  })
})
export type Health = Static<typeof HealthSchema>

export const StatsSchema = Type.Object({
  totalSessions: Type.Integer(),
  connectedSessions: Type.Integer(),
  totalStatuses: Type.Integer({ description: 'Statuses stored (last STATUS_TTL_HOURS)' }),
  totalViewers: Type.Integer({ description: 'Real viewers (the account\'s own views excluded)' }),
  totalReactions: Type.Integer({ description: 'Reactions standing on the stored statuses' }),
  totalReplies: Type.Integer({ description: 'Replies to the stored statuses' }),
  lastStatusSent: Type.Union([IsoDateSchema, Type.Null()]),
  start: Type.Object({
    concurrency: Type.Integer({ description: 'SESSION_START_CONCURRENCY: handshakes at once' }),
    waiting: Type.Integer({ description: 'This node\'s sessions waiting for their turn to connect' }),
    opening: Type.Integer({ description: 'Sessions holding a start place on this node: handshakes under way, or about to begin (never more than concurrency)' })
  }, { description: 'The paced start on the node asked: stored sessions reconnect a bounded number at a time (docs/operations.md)' }),
  sessions: Type.Array(Type.Object({
    sessionId: Type.String(),
    sessionName: Type.String(),
    connected: Type.Boolean(),
    ownNumber: Type.Union([Type.String(), Type.Null()]),
    createdAt: IsoDateSchema
  }))
})
export type Stats = Static<typeof StatsSchema>

export const StorageSchema = Type.Object({
  database: Type.Object({
    file: Type.String({ description: 'SQLite file; `postgresql` with DATABASE_URL' }),
    bytes: Type.Integer({ description: 'Main database file (PostgreSQL: pg_database_size)' }),
    walBytes: Type.Integer({ description: 'Write-ahead log' })
  }),
  uploads: Type.Object({
    count: Type.Integer(),
    bytes: Type.Integer(),
    store: Type.Union([Type.Literal('local'), Type.Literal('s3')], { description: 'MEDIA_STORE: where uploads are kept' }),
    location: Type.String({ description: 'UPLOAD_DIR, or `s3://<bucket>` with MEDIA_STORE=s3' })
  }),
  sessions: Type.Array(Type.Object({
    sessionId: Type.String(),
    statuses: Type.Integer(),
    viewers: Type.Integer(),
    authStateRows: Type.Integer({ description: 'Platform credentials and signal keys' }),
    mediaFiles: Type.Integer({ description: 'Media files referenced by this session\'s statuses' }),
    mediaBytes: Type.Integer()
  }))
})
export type Storage = Static<typeof StorageSchema>

export const ClusterNodeSchema = Type.Object({
  nodeId: Type.String({ description: 'NODE_ID of the node' }),
  url: Type.String({ description: 'NODE_URL: where the other nodes reach it' }),
  sessions: Type.Array(Type.String(), { description: 'Sessions it owns now (an unexpired lease)' }),
  lastSeen: IsoDateSchema
}, { title: 'ClusterNode' })

export const ClusterSchema = Type.Object({
  self: Type.String({ description: 'NODE_ID of the node that answered' }),
  nodes: Type.Array(ClusterNodeSchema, { description: 'Registered nodes (single-node mode: this one, with every session); a node whose lastSeen is older than LEASE_TTL_MS is dead and being taken over' })
}, { title: 'Cluster' })
