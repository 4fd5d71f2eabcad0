import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { SessionParamsSchema } from '../../schemas/common.js'
import { failures, Ok } from '../../schemas/envelope.js'
import {
  ConnectionStatusViewSchema, CreatedSessionSchema, CreateSessionBodySchema, PairingCodeRequestedSchema, PairingCodeViewSchema,
  PhoneNumberBodySchema, PhoneNumberUpdatedSchema, QrCodeViewSchema, SessionMessageSchema, SessionSchema
} from '../../schemas/session.js'
import { BadRequest } from '../../src/errors.js'

const tags = ['sessions']

const routes: FastifyPluginAsyncTypebox = async (app) => {
  app.post('/sessions', {
    config: { scope: 'manage', placement: 'least-loaded' },
    schema: {
      tags,
      summary: 'Create a session and start linking it (pairing code by default, or QR)',
      description: 'Created with a scoped key (scope `manage`) that lists its sessions, the new session joins that list.',
      body: CreateSessionBodySchema,
      response: { 200: Ok(CreatedSessionSchema), ...failures(400, 409, 503) }
    }
  }, async (req) => {
    const { sessionId } = req.body
    const sessionName = req.body.sessionName.trim()
    const authMethod = req.body.authMethod ?? 'pairing'
    if (sessionName === '') throw new BadRequest('body.sessionName must not be blank')
    // the seed contract: "null or absent for QR sessions"; a number there would be ignored, so it is refused
    const given = req.body.phoneNumber ?? null
    if (authMethod === 'pairing' && given === null) throw new BadRequest("body.phoneNumber is required when authMethod is 'pairing'")
    if (authMethod === 'qrcode' && given !== null) throw new BadRequest("body.phoneNumber is only used when authMethod is 'pairing' (send null or leave it out)")
    const phoneNumber = authMethod === 'pairing' ? given : null
    await app.sessions.create({ sessionId, sessionName, authMethod, phoneNumber }, req.principal)
    const message = authMethod === 'pairing'
      ? 'Session created. Enter the pairing code (event pairing-code, or GET …/pairing-code) in Linked devices → Link with phone number.'
      : 'Session created. Scan the QR code (event qr-code, or GET …/qr-code) in Linked devices → Link a device.'
    return { success: true as const, data: { sessionId, sessionName, phoneNumber, authMethod, message } }
  })

  app.get('/sessions', {
    config: { scope: 'read' },
    schema: { tags, summary: 'List sessions with their live connection state (a scoped key: its own sessions)', response: { 200: Ok(Type.Array(SessionSchema)), ...failures() } }
  }, async (req) => ({ success: true as const, data: await app.sessions.list(req.principal?.admin === false ? req.principal : null) }))

  app.delete('/sessions/:sessionId', {
    config: { scope: 'manage', placement: 'owner' },
    schema: {
      tags,
      summary: 'Delete a session: logs the device out and removes its auth data, statuses, viewers and media',
      params: SessionParamsSchema,
      response: { 200: Ok(SessionMessageSchema), ...failures(400, 404, 503) }
    }
  }, async (req) => {
    const { sessionId } = req.params
    await app.sessions.remove(sessionId)
    return { success: true as const, data: { sessionId, message: 'Session deleted' } }
  })

  app.post('/sessions/:sessionId/restart', {
    config: { scope: 'manage', placement: 'owner' },
    schema: {
      tags,
      summary: 'Tear down and reconnect a session (also starts a new linking attempt)',
      params: SessionParamsSchema,
      response: { 200: Ok(SessionMessageSchema), ...failures(400, 404, 503) }
    }
  }, async (req) => {
    const { sessionId } = req.params
    await app.sessions.restart(sessionId)
    return { success: true as const, data: { sessionId, message: 'Session restarting' } }
  })

  app.put('/sessions/:sessionId/phone-number', {
    config: { scope: 'manage', placement: 'owner' },
    schema: {
      tags,
      summary: 'Change the phone number used for pairing-code linking',
      params: SessionParamsSchema,
      body: PhoneNumberBodySchema,
      response: { 200: Ok(PhoneNumberUpdatedSchema), ...failures(400, 404, 503) }
    }
  }, async (req) => {
    const { sessionId } = req.params
    const { phoneNumber } = req.body
    await app.sessions.updatePhoneNumber(sessionId, phoneNumber)
    return { success: true as const, data: { sessionId, phoneNumber, message: 'Phone number updated' } }
  })

  app.get('/sessions/:sessionId/connection-status', {
    config: { scope: 'read', placement: 'owner' },
    schema: { tags, summary: 'Connection state, and the current pairing or QR code while linking', params: SessionParamsSchema, response: { 200: Ok(ConnectionStatusViewSchema), ...failures(400, 404, 503) } }
  }, async (req) => {
    const v = await app.sessions.get(req.params.sessionId)
    return {
      success: true as const,
      data: {
        sessionId: v.sessionId, connected: v.connected, status: v.status, authMethod: v.authMethod, pairingCode: v.pairingCode, qrCode: v.qrCode,
        phoneNumber: v.phoneNumber, ownNumber: v.ownNumber
      }
    }
  })

  app.get('/sessions/:sessionId/pairing-code', {
    config: { scope: 'read', placement: 'owner' },
    schema: { tags, summary: 'The current pairing code (null when connected or not yet issued)', params: SessionParamsSchema, response: { 200: Ok(PairingCodeViewSchema), ...failures(400, 404, 503) } }
  }, async (req) => {
    const v = await app.sessions.get(req.params.sessionId)
    return { success: true as const, data: { sessionId: v.sessionId, pairingCode: v.pairingCode, phoneNumber: v.phoneNumber, connected: v.connected } }
  })

  app.post('/sessions/:sessionId/request-pairing-code', {
    config: { scope: 'manage', placement: 'owner' },
    schema: {
      tags,
      summary: 'Generate a fresh 8-character pairing code (only while not connected)',
      params: SessionParamsSchema,
      response: { 200: Ok(PairingCodeRequestedSchema), ...failures(400, 404, 409, 503) }
    }
  }, async (req) => {
    const { sessionId } = req.params
    const { pairingCode, phoneNumber } = await app.sessions.requestPairingCode(sessionId)
    return {
      success: true as const,
      data: { sessionId, pairingCode, phoneNumber: phoneNumber ?? '', message: 'Enter this code in Linked devices → Link with phone number' }
    }
  })

  app.get('/sessions/:sessionId/qr-code', {
    config: { scope: 'read', placement: 'owner' },
    schema: { tags, summary: 'The current QR code as a PNG data URL (QR sessions; refreshed automatically)', params: SessionParamsSchema, response: { 200: Ok(QrCodeViewSchema), ...failures(400, 404, 503) } }
  }, async (req) => {
    const v = await app.sessions.qrCode(req.params.sessionId)
    return { success: true as const, data: { sessionId: v.sessionId, qrCode: v.qrCode, authMethod: v.authMethod, connected: v.connected } }
  })
}

export default routes
