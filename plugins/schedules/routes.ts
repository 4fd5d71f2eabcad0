import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { SessionParamsSchema } from '../../schemas/common.js'
import { failures, Ok } from '../../schemas/envelope.js'
import {
  CreatedScheduleSchema, CreateScheduleBodySchema, DeletedScheduleSchema, ScheduleParamsSchema, ScheduleSchema, UpdateScheduleBodySchema
} from '../../schemas/schedule.js'

const tags = ['schedules']

const routes: FastifyPluginAsyncTypebox = async (app) => {
  const { schedules } = app

  app.post('/sessions/:sessionId/scheduled-statuses', {
    config: { scope: 'manage' },
    schema: {
      tags,
      summary: 'Schedule a status: once at `at`, or repeating (`repeat`)',
      description: '`status` is a send-status body, checked now (an image or video upload is kept while the schedule exists). ' +
        '`at` is an ISO 8601 time with a zone, not in the past. Each run posts through send-status (answering at once: `wait: false`); ' +
        '`scheduled-status-fired` or `scheduled-status-failed` follow. In a cluster exactly one node fires each run.',
      params: SessionParamsSchema,
      body: CreateScheduleBodySchema,
      response: { 200: Ok(CreatedScheduleSchema), ...failures(400, 404) }
    }
  }, async (req) => ({ success: true as const, data: await schedules.create(req.params.sessionId, req.body) }))

  app.get('/sessions/:sessionId/scheduled-statuses', {
    config: { scope: 'read' },
    schema: {
      tags,
      summary: "The session's schedules, oldest first, each with its runs",
      params: SessionParamsSchema,
      response: { 200: Ok(Type.Array(ScheduleSchema)), ...failures(400, 404) }
    }
  }, async (req) => ({ success: true as const, data: await schedules.list(req.params.sessionId) }))

  app.get('/sessions/:sessionId/scheduled-statuses/:scheduleId', {
    config: { scope: 'read' },
    schema: {
      tags,
      // the collection's GET would get the same generated id (operationIds are unique: OpenAPI 3, openapi-typescript)
      operationId: 'getSessionsScheduledStatus',
      summary: 'One schedule: its state, next run and every run recorded (status id, state, late, error)',
      params: ScheduleParamsSchema,
      response: { 200: Ok(ScheduleSchema), ...failures(400, 404) }
    }
  }, async (req) => ({ success: true as const, data: await schedules.get(req.params.sessionId, req.params.scheduleId) }))

  app.patch('/sessions/:sessionId/scheduled-statuses/:scheduleId', {
    config: { scope: 'manage' },
    schema: {
      tags,
      summary: 'Change a schedule: its status body, its time or its repeat rule (null: once)',
      description: 'A new `at` or `repeat` computes the next run again and starts `repeat.count` from zero; runs already recorded stay.',
      params: ScheduleParamsSchema,
      body: UpdateScheduleBodySchema,
      response: { 200: Ok(ScheduleSchema), ...failures(400, 404) }
    }
  }, async (req) => ({ success: true as const, data: await schedules.update(req.params.sessionId, req.params.scheduleId, req.body) }))

  app.post('/sessions/:sessionId/scheduled-statuses/:scheduleId/pause', {
    config: { scope: 'manage' },
    schema: {
      tags,
      summary: 'Pause a schedule: no run fires until it is resumed',
      params: ScheduleParamsSchema,
      response: { 200: Ok(ScheduleSchema), ...failures(400, 404) }
    }
  }, async (req) => ({ success: true as const, data: await schedules.pause(req.params.sessionId, req.params.scheduleId) }))

  app.post('/sessions/:sessionId/scheduled-statuses/:scheduleId/resume', {
    config: { scope: 'manage' },
    schema: {
      tags,
      summary: 'Resume a paused schedule from its next run after now (runs due while paused are skipped)',
      params: ScheduleParamsSchema,
      response: { 200: Ok(ScheduleSchema), ...failures(400, 404) }
    }
  }, async (req) => ({ success: true as const, data: await schedules.resume(req.params.sessionId, req.params.scheduleId) }))

  app.delete('/sessions/:sessionId/scheduled-statuses/:scheduleId', {
    config: { scope: 'manage' },
    schema: {
      tags,
      summary: 'Delete a schedule and its run records; its upload goes when nothing else uses it',
      params: ScheduleParamsSchema,
      response: { 200: Ok(DeletedScheduleSchema), ...failures(400, 404) }
    }
  }, async (req) => ({ success: true as const, data: await schedules.remove(req.params.sessionId, req.params.scheduleId) }))
}

export default routes
