import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { SessionParamsSchema } from '../../schemas/common.js'
import { failures, Ok } from '../../schemas/envelope.js'
import { CONTACT_CSV_COLUMNS, InsightContactPageSchema, InsightContactsQuerySchema, InsightsQuerySchema, InsightsSchema } from '../../schemas/insights.js'

const tags = ['insights']

const routes: FastifyPluginAsyncTypebox = async (app) => {
  const { insights } = app

  app.get('/sessions/:sessionId/insights', {
    config: { scope: 'read' },
    schema: {
      tags,
      summary: 'Insights over the statuses posted in a range: totals, time to view, views by hour and weekday, per day, by type, by audience, per status',
      description: 'Expired statuses count through their summaries (kept INSIGHTS_RETENTION_DAYS), live ones from their rows, counted the same way. ' +
        'Hours, weekdays and dates are those of `tz`. 400 when `from` is after `to` or `tz` is unknown. How each figure is counted: docs/insights.md.',
      params: SessionParamsSchema,
      querystring: InsightsQuerySchema,
      response: { 200: Ok(InsightsSchema), ...failures(400, 404) }
    }
  }, async (req) => ({ success: true as const, data: await insights.overview(req.params.sessionId, req.query) }))

  app.get('/sessions/:sessionId/insights/contacts', {
    config: { scope: 'read' },
    schema: {
      tags,
      summary: 'Insights per contact: statuses received, viewed, view rate, median time to view, reactions, replies, last view (JSON pages, or CSV)',
      description: 'Every contact who was a recipient line of a status in range, those who never viewed included (viewed 0). ' +
        `\`format=csv\` (or \`Accept: text/csv\`) answers every row as CSV (RFC 4180, CRLF) with the header \`${CONTACT_CSV_COLUMNS.join(',')}\`.`,
      params: SessionParamsSchema,
      querystring: InsightContactsQuerySchema,
      response: {
        200: {
          content: {
            'application/json': { schema: Ok(InsightContactPageSchema) },
            'text/csv': { schema: Type.String({ description: `${CONTACT_CSV_COLUMNS.join(',')} and a row per contact` }) }
          }
        },
        ...failures(400, 404)
      }
    }
  }, async (req, reply) => {
    const accept = req.headers.accept ?? ''
    const csv = req.query.format === 'csv' || (req.query.format === undefined && /\btext\/csv\b/i.test(accept) && !/\bapplication\/json\b/i.test(accept))
    if (csv) {
      const body = await insights.contactsCsv(req.params.sessionId, req.query)
      return await reply.type('text/csv; charset=utf-8')
        .header('content-disposition', `attachment; filename="insights-${req.params.sessionId}-contacts.csv"`)
        .send(body)
    }
    return await reply.type('application/json; charset=utf-8').send({ success: true as const, data: await insights.contacts(req.params.sessionId, req.query) })
  })
}

export default routes
