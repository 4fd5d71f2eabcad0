import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { SessionParamsSchema } from '../../schemas/common.js'
import { failures, Ok } from '../../schemas/envelope.js'
import { SendStatusAcceptedSchema, SendStatusBodySchema, SendStatusResultSchema } from '../../schemas/status.js'

const routes: FastifyPluginAsyncTypebox = async (app) => {
  app.post('/sessions/:sessionId/send-status', {
    config: { scope: 'send', placement: 'owner' },
    schema: {
      tags: ['statuses'],
      summary: "Publish a status (text, image, video or media URL) to the listed numbers (or the own number only), or to an audience: the phone's contacts, its status privacy, a list or a saved audience",
      description: '`audience` (instead of `targetNumbers`) chooses the recipients and the post\'s status_setting; the status keeps the resolved list (`audience` in sent-statuses). ' +
        "409 when the phone's saved contacts or status privacy are not known yet. " +
        'Long lists go out in chunks under one message id; each chunk the platform acknowledged is recorded before the next. ' +
        'A dropped link is waited out (SEND_RECONNECT_WAIT_MS) and the send continues. 200 with `state: sent`, or `state: partial` with ' +
        '`sentCount` when sending stopped part-way (the status is kept, listed and revocable for exactly those recipients). ' +
        'A send that stopped before anyone had it answers 500 and leaves no status. ' +
        'By default every request waits for the end of the send and answers 200, however long the list (the seed contract). ' +
        'Only with `wait: false` in the body, or when the operator set SEND_WAIT_MAX_RECIPIENTS (unset by default) and the list is longer, ' +
        'the answer is 202 with `state: sending` as soon as the status is recorded; `status-send-progress` and `status-sent` ' +
        '(or `statuses-updated` with action `partial` / `send-failed`) follow as events.',
      params: SessionParamsSchema,
      body: SendStatusBodySchema,
      response: { 200: Ok(SendStatusResultSchema), 202: Ok(SendStatusAcceptedSchema), ...failures(400, 404, 409, 503) }
    }
  }, async (req, reply) => {
    await app.keys.checkUpload(req.principal, req.body)
    const data = await app.sendStatus.submit(req.params.sessionId, req.body)
    if (data.state === 'sending') return await reply.code(202).send({ success: true as const, data })
    return { success: true as const, data }
  })
}

export default routes
