import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { StatusParamsSchema } from '../../schemas/common.js'
import { failures, Ok } from '../../schemas/envelope.js'
import { StatusReportSchema } from '../../schemas/schedule.js'
import { createReports, reportCsv } from './report.js'

const routes: FastifyPluginAsyncTypebox = async (app) => {
  const reports = createReports({ stores: app.stores })

  app.get('/sessions/:sessionId/statuses/:statusId/report', {
    config: { scope: 'read' },
    schema: {
      tags: ['statuses'],
      summary: 'Per-recipient report of a status: delivered, viewed, reaction, replied (JSON, or CSV with Accept: text/csv)',
      description: 'One entry per recipient it was sent to (then anyone else who viewed or answered it), the own number left out; ' +
        'null where it did not happen. A view implies delivery: without a delivery receipt `deliveredAt` is the view time. ' +
        'With `Accept: text/csv` the answer is CSV (RFC 4180, CRLF): a header row `number,deliveredAt,viewedAt,reaction,repliedAt` and a row per recipient.',
      params: StatusParamsSchema,
      response: {
        200: {
          content: {
            'application/json': { schema: Ok(StatusReportSchema) },
            'text/csv': { schema: Type.String({ description: 'number,deliveredAt,viewedAt,reaction,repliedAt and a row per recipient' }) }
          }
        },
        ...failures(400, 404)
      }
    }
  }, async (req, reply) => {
    const report = await reports.report(req.params.sessionId, req.params.statusId)
    const accept = req.headers.accept ?? ''
    if (/\btext\/csv\b/i.test(accept) && !/\bapplication\/json\b/i.test(accept)) {
      return await reply.type('text/csv; charset=utf-8')
        .header('content-disposition', `attachment; filename="status-${report.statusId}-report.csv"`)
        .send(reportCsv(report))
    }
    return await reply.type('application/json; charset=utf-8').send({ success: true as const, data: report })
  })
}

export default routes
