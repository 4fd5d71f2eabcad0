import { Type, type Static } from '@sinclair/typebox'
import { IsoDateSchema } from './common.js'

export const HealthSchema = Type.Object({
  status: Type.Literal('healthy'),
  timestamp: IsoDateSchema,
  uptime: Type.Number({ description: 'Seconds since the process started' }),
  version: Type.String()
})

export const StatsSchema = Type.Object({
  totalSessions: Type.Integer(),
  connectedSessions: Type.Integer(),
  totalStatuses: Type.Integer({ description: 'Statuses stored (last STATUS_TTL_HOURS)' }),
  totalViewers: Type.Integer({ description: 'Real viewers (the account\'s own views excluded)' }),
  lastStatusSent: Type.Union([IsoDateSchema, Type.Null()]),
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
    file: Type.String(),
    bytes: Type.Integer({ description: 'Main database file' }),
    walBytes: Type.Integer({ description: 'Write-ahead log' })
  }),
  uploads: Type.Object({
    count: Type.Integer(),
    bytes: Type.Integer()
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
