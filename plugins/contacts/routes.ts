import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { SessionParamsSchema } from '../../schemas/common.js'
import { ContactPageSchema, ContactsQuerySchema, StatusPrivacySchema } from '../../schemas/contacts.js'
import { failures, Ok } from '../../schemas/envelope.js'

const tags = ['contacts']

const routes: FastifyPluginAsyncTypebox = async (app) => {
  const { contacts } = app

  app.get('/sessions/:sessionId/contacts', {
    config: { scope: 'read' },
    schema: {
      tags,
      summary: "The phone's saved contacts: number, LID and name of each",
      description: 'What the linked phone shares through app-state sync, kept current (a contact removed on the phone goes). ' +
        'Paged: pass `nextCursor` as `cursor`; `search` matches the name (any case) or the number. Empty until the phone has shared them.',
      params: SessionParamsSchema,
      querystring: ContactsQuerySchema,
      response: { 200: Ok(ContactPageSchema), ...failures(400, 404) }
    }
  }, async (req) => ({ success: true as const, data: await contacts.list(req.params.sessionId, req.query) }))

  app.get('/sessions/:sessionId/status-privacy', {
    config: { scope: 'read' },
    schema: {
      tags,
      summary: "The phone's status privacy: who its statuses go to (contacts, all but a list, or only a list)",
      description: 'Read from the phone when the session connects and again whenever the phone changes it. `mode` is null until then.',
      params: SessionParamsSchema,
      response: { 200: Ok(StatusPrivacySchema), ...failures(400, 404) }
    }
  }, async (req) => ({ success: true as const, data: await contacts.privacy(req.params.sessionId) }))
}

export default routes
