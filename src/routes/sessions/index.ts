import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { SessionParamsSchema } from '../../schemas/common.js'
import { failures, Ok } from '../../schemas/envelope.js'
import {
  ConnectionStatusViewSchema, CreatedSessionSchema, CreateSessionBodySchema, PairingCodeRequestedSchema, PairingCodeViewSchema,
  PhoneNumberBodySchema, PhoneNumberUpdatedSchema, QrCodeViewSchema, SessionMessageSchema, SessionSchema
} from '../../schemas/session.js'
import { BadRequest, NotQrSession, SessionExists, SessionNotFound } from '../../errors.js'
import type { SessionRow } from '../../db/database.js'

const tags = ['sessions']

const routes: FastifyPluginAsyncTypebox = async (app) => {
  const { db } = app.db

  async function findSession (sessionId: string): Promise<SessionRow> {
    const row = await db.selectFrom('sessions').selectAll().where('id', '=', sessionId).executeTakeFirst()
    if (row === undefined) throw new SessionNotFound()
    return row
  }

  /** Live state from the platform over the stored row. */
  function view (row: SessionRow) {
    const snap = app.platform.snapshot(row.id)
    const connected = snap?.connected ?? false
    return {
      sessionId: row.id,
      sessionName: row.name,
      authMethod: row.auth_method,
      phoneNumber: row.phone_number,
      connected,
      status: snap?.status ?? 'close',
      ownNumber: connected ? snap?.ownNumber ?? row.own_number : null,
      createdAt: new Date(row.created_at).toISOString(),
      pairingCode: connected || row.auth_method !== 'pairing' ? null : snap?.pairingCode ?? null,
      qrCode: connected || row.auth_method !== 'qrcode' ? null : snap?.qrCode ?? null
    }
  }

  app.post('/sessions', {
    schema: {
      tags,
      summary: 'Create a session and start linking it (pairing code by default, or QR)',
      body: CreateSessionBodySchema,
      response: { 200: Ok(CreatedSessionSchema), ...failures(400, 409) }
    }
  }, async (req) => {
    const { sessionId } = req.body
    const sessionName = req.body.sessionName.trim()
    const authMethod = req.body.authMethod ?? 'pairing'
    if (sessionName === '') throw new BadRequest('body.sessionName must not be blank')
    if (authMethod === 'pairing' && req.body.phoneNumber === undefined) throw new BadRequest("body.phoneNumber is required when authMethod is 'pairing'")
    if (authMethod === 'qrcode' && req.body.phoneNumber !== undefined) throw new BadRequest("body.phoneNumber is only used when authMethod is 'pairing'")
    const phoneNumber = authMethod === 'pairing' ? req.body.phoneNumber ?? null : null
    const createdAt = Date.now()
    const inserted = await db.insertInto('sessions')
      .values({ id: sessionId, name: sessionName, auth_method: authMethod, phone_number: phoneNumber, own_number: null, own_lid: null, created_at: createdAt })
      .onConflict((oc) => oc.column('id').doNothing())
      .executeTakeFirst()
    if (inserted.numInsertedOrUpdatedRows === 0n) throw new SessionExists()
    app.broadcaster.emit('session-created', { sessionId, sessionName, phoneNumber, authMethod, createdAt: new Date(createdAt).toISOString() })
    await app.platform.startSession({ sessionId, authMethod, phoneNumber })
    const message = authMethod === 'pairing'
      ? 'Session created. Enter the pairing code (event pairing-code, or GET …/pairing-code) in Linked devices → Link with phone number.'
      : 'Session created. Scan the QR code (event qr-code, or GET …/qr-code) in Linked devices → Link a device.'
    return { success: true as const, data: { sessionId, sessionName, phoneNumber, authMethod, message } }
  })

  app.get('/sessions', {
    schema: { tags, summary: 'List sessions with their live connection state', response: { 200: Ok(Type.Array(SessionSchema)), ...failures() } }
  }, async () => {
    const rows = await db.selectFrom('sessions').selectAll().orderBy('created_at').orderBy('id').execute()
    return { success: true as const, data: rows.map(view) }
  })

  app.delete('/sessions/:sessionId', {
    schema: {
      tags,
      summary: 'Delete a session: logs the device out and removes its auth data, statuses, viewers and media',
      params: SessionParamsSchema,
      response: { 200: Ok(SessionMessageSchema), ...failures(400, 404) }
    }
  }, async (req) => {
    const { sessionId } = req.params
    await findSession(sessionId)
    await app.platform.removeSession(sessionId)
    const media = await db.selectFrom('statuses').select('media_file').distinct()
      .where('session_id', '=', sessionId).where('media_file', 'is not', null).execute()
    await db.deleteFrom('sessions').where('id', '=', sessionId).execute()
    for (const { media_file: file } of media) {
      if (file === null) continue
      const stillUsed = await db.selectFrom('statuses').select('id').where('media_file', '=', file).executeTakeFirst()
      if (stillUsed === undefined) await app.mediaStore.remove(file)
    }
    app.broadcaster.emit('session-deleted', { sessionId })
    return { success: true as const, data: { sessionId, message: 'Session deleted' } }
  })

  app.post('/sessions/:sessionId/restart', {
    schema: {
      tags,
      summary: 'Tear down and reconnect a session (also starts a new linking attempt)',
      params: SessionParamsSchema,
      response: { 200: Ok(SessionMessageSchema), ...failures(400, 404) }
    }
  }, async (req) => {
    const row = await findSession(req.params.sessionId)
    await app.platform.restartSession(row.id)
    return { success: true as const, data: { sessionId: row.id, message: 'Session restarting' } }
  })

  app.put('/sessions/:sessionId/phone-number', {
    schema: {
      tags,
      summary: 'Change the phone number used for pairing-code linking',
      params: SessionParamsSchema,
      body: PhoneNumberBodySchema,
      response: { 200: Ok(PhoneNumberUpdatedSchema), ...failures(400, 404) }
    }
  }, async (req) => {
    const row = await findSession(req.params.sessionId)
    const { phoneNumber } = req.body
    if (row.auth_method !== 'pairing') throw new BadRequest('This session links by QR code and has no phone number')
    await db.updateTable('sessions').set({ phone_number: phoneNumber }).where('id', '=', row.id).execute()
    await app.platform.updatePhoneNumber(row.id, phoneNumber)
    return { success: true as const, data: { sessionId: row.id, phoneNumber, message: 'Phone number updated' } }
  })

  app.get('/sessions/:sessionId/connection-status', {
    schema: { tags, summary: 'Connection state, and the current pairing or QR code while linking', params: SessionParamsSchema, response: { 200: Ok(ConnectionStatusViewSchema), ...failures(400, 404) } }
  }, async (req) => {
    const v = view(await findSession(req.params.sessionId))
    return {
      success: true as const,
      data: { sessionId: v.sessionId, connected: v.connected, status: v.status, authMethod: v.authMethod, pairingCode: v.pairingCode, qrCode: v.qrCode, phoneNumber: v.phoneNumber, ownNumber: v.ownNumber }
    }
  })

  app.get('/sessions/:sessionId/pairing-code', {
    schema: { tags, summary: 'The current pairing code (null when connected or not yet issued)', params: SessionParamsSchema, response: { 200: Ok(PairingCodeViewSchema), ...failures(400, 404) } }
  }, async (req) => {
    const v = view(await findSession(req.params.sessionId))
    return { success: true as const, data: { sessionId: v.sessionId, pairingCode: v.pairingCode, phoneNumber: v.phoneNumber, connected: v.connected } }
  })

  app.post('/sessions/:sessionId/request-pairing-code', {
    schema: {
      tags,
      summary: 'Generate a fresh 8-character pairing code (only while not connected)',
      params: SessionParamsSchema,
      response: { 200: Ok(PairingCodeRequestedSchema), ...failures(400, 404, 409) }
    }
  }, async (req) => {
    const row = await findSession(req.params.sessionId)
    const pairingCode = await app.platform.requestPairingCode(row.id)
    const fresh = await findSession(row.id)
    return {
      success: true as const,
      data: { sessionId: row.id, pairingCode, phoneNumber: fresh.phone_number ?? '', message: 'Enter this code in Linked devices → Link with phone number' }
    }
  })

  app.get('/sessions/:sessionId/qr-code', {
    schema: { tags, summary: 'The current QR code as a PNG data URL (QR sessions; refreshed automatically)', params: SessionParamsSchema, response: { 200: Ok(QrCodeViewSchema), ...failures(400, 404) } }
  }, async (req) => {
    const row = await findSession(req.params.sessionId)
    if (row.auth_method !== 'qrcode') throw new NotQrSession()
    const v = view(row)
    return { success: true as const, data: { sessionId: v.sessionId, qrCode: v.qrCode, authMethod: v.authMethod, connected: v.connected } }
  })
}

export default routes
