import { LogController, type FastifyReply, type FastifyRequest } from 'fastify'

/**
 * Fastify's per-request log lines, one level quieter: `incoming request` and `request completed` at
 * debug instead of info, so at the default level (info) a request costs no log line (a busy API would
 * spend more on its log than on its answers). Failures keep their levels (`request errored` at error).
 */
export class QuietRequestLog extends LogController {
  override incomingRequest (request: FastifyRequest): void {
    if (this.isLogDisabled(request)) return
    request.log.debug({ req: request }, 'incoming request')
  }

  override requestCompleted (error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (error !== null && error !== undefined) super.requestCompleted(error, request, reply)
    else if (!this.isLogDisabled(request)) reply.log.debug({ res: reply, responseTime: reply.elapsedTime }, 'request completed')
  }
}
