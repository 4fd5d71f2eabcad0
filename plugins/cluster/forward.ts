import type { FastifyReply, FastifyRequest } from 'fastify'
import { OwnerUnavailable } from '../../src/errors.js'

/** Marks a request one node passed to another: it is answered there, never passed on again (no loops). */
export const FORWARDED_HEADER = 'x-status-tracker-forwarded-by'

/** Request headers that go along (the key is set from the node's own config, identical on every node). */
const KEPT = ['content-type', 'accept', 'accept-language', 'x-request-id']

/**
 * Replays the request on another node (`base` is its NODE_URL) and answers with what it answered: the same
 * status code, headers that describe the body, and the body bytes as they are. An owner that cannot be
 * reached answers 503 in the envelope.
 */
export async function forwardRequest (req: FastifyRequest, reply: FastifyReply, to: { nodeId: string, url: string }, opts: { apiKey: string, selfId: string, timeoutMs: number }): Promise<FastifyReply> {
  const headers: Record<string, string> = { 'x-api-key': opts.apiKey, [FORWARDED_HEADER]: opts.selfId }
  for (const name of KEPT) {
    const value = req.headers[name]
    if (typeof value === 'string') headers[name] = value
  }
  headers['x-request-id'] ??= req.id
  const hasBody = req.body !== undefined && req.body !== null && req.method !== 'GET' && req.method !== 'HEAD'
  if (hasBody) headers['content-type'] = 'application/json'
  let res: Response
  let body: Buffer
  try {
    res = await fetch(new URL(req.url, to.url + '/'), {
      method: req.method,
      headers,
      ...(hasBody ? { body: JSON.stringify(req.body) } : {}),
      signal: AbortSignal.timeout(opts.timeoutMs)
    })
    body = Buffer.from(await res.arrayBuffer())
  } catch (err) {
    req.log.warn({ err, node: to.nodeId }, 'cluster: the node that owns the session did not answer')
    throw new OwnerUnavailable(`The node that holds this session (${to.nodeId}) could not be reached; try again shortly (its sessions move to other nodes when it is gone)`)
  }
  req.log.debug({ node: to.nodeId, status: res.status }, 'cluster: answered by the owning node')
  const type = res.headers.get('content-type')
  if (type !== null) void reply.type(type)
  void reply.header('x-status-tracker-node', to.nodeId)
  // the owner's answer, serialised and enveloped there, goes out byte for byte
  return await reply.code(res.status).send(body)
}
