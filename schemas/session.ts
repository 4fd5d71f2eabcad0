import { Type, type Static } from '@sinclair/typebox'
import { IsoDateSchema, Nullable, PhoneNumberSchema, SessionIdSchema } from './common.js'

export const AuthMethodSchema = Type.Union([Type.Literal('pairing'), Type.Literal('qrcode')], { description: "'pairing' (default) or 'qrcode'" })
export const ConnectionStatusSchema = Type.Union(['connecting', 'open', 'close', 'logged-out'].map((s) => Type.Literal(s)))

export const CreateSessionBodySchema = Type.Object({
  sessionId: SessionIdSchema,
  sessionName: Type.String({ minLength: 1, maxLength: 100, description: '1 to 100 characters after trimming' }),
  authMethod: Type.Optional(AuthMethodSchema),
  phoneNumber: Type.Optional(Type.Union([PhoneNumberSchema, Type.Null()], { description: "Required for 'pairing'; null or absent for 'qrcode' (the seed contract)" }))
}, { additionalProperties: false })
export type CreateSessionBody = Static<typeof CreateSessionBodySchema>

export const CreatedSessionSchema = Type.Object({
  sessionId: Type.String(),
  sessionName: Type.String(),
  phoneNumber: Nullable(Type.String()),
  authMethod: AuthMethodSchema,
  message: Type.String()
})

export const SessionSchema = Type.Object({
  sessionId: Type.String(),
  sessionName: Type.String(),
  authMethod: AuthMethodSchema,
  phoneNumber: Nullable(Type.String()),
  connected: Type.Boolean(),
  status: ConnectionStatusSchema,
  ownNumber: Nullable(Type.String()),
  createdAt: IsoDateSchema,
  pairingCode: Nullable(Type.String()),
  qrCode: Nullable(Type.String({ description: 'PNG data URL' }))
})
export type SessionView = Static<typeof SessionSchema>

export const SessionMessageSchema = Type.Object({ sessionId: Type.String(), message: Type.String() })

export const PhoneNumberBodySchema = Type.Object({ phoneNumber: PhoneNumberSchema }, { additionalProperties: false })
export const PhoneNumberUpdatedSchema = Type.Object({ sessionId: Type.String(), phoneNumber: Type.String(), message: Type.String() })

export const ConnectionStatusViewSchema = Type.Object({
  sessionId: Type.String(),
  connected: Type.Boolean(),
  status: ConnectionStatusSchema,
  authMethod: AuthMethodSchema,
  pairingCode: Nullable(Type.String()),
  qrCode: Nullable(Type.String()),
  phoneNumber: Nullable(Type.String()),
  ownNumber: Nullable(Type.String())
})

export const PairingCodeViewSchema = Type.Object({
  sessionId: Type.String(),
  pairingCode: Nullable(Type.String()),
  phoneNumber: Nullable(Type.String()),
  connected: Type.Boolean()
})

export const PairingCodeRequestedSchema = Type.Object({
  sessionId: Type.String(),
  pairingCode: Type.String({ minLength: 8, maxLength: 8 }),
  phoneNumber: Type.String(),
  message: Type.String()
})

export const QrCodeViewSchema = Type.Object({
  sessionId: Type.String(),
  qrCode: Nullable(Type.String({ description: 'PNG data URL; null until the platform offers one, and once connected' })),
  authMethod: AuthMethodSchema,
  connected: Type.Boolean()
})

export { SessionIdSchema }
