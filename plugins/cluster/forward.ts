import type { FastifyReply, FastifyRequest } from 'fastify'
import { OwnerUnavailable } from '../../src/errors.js'
import { FORWARD, forwardHeaders } from './signature.js'

/** Marks a request one node passed to another: it is answered there, never passed on again (no loops). */
export const FORWARDED_HEADER = FORWARD.by

/**
 * Request headers that go along. Never the caller's key: this node checked it, and the owner trusts this
 * node's signed word for it (signature.ts).
 */
const KEPT = ['accept', 'accept-language', 'x-request-id']

/**
 * Replays the request on another node (`base` is its NODE_URL) and answers with what it answered: the same
 * status code, headers that describe the body, and the body bytes as they are. An owner that cannot be
 * reached answers 503 in the envelope.
 */
export async function forwardRequest (
  req: FastifyRequest, reply: FastifyReply, to: { nodeId: string, url: string }, opts: { secret: string, selfId: string, timeoutMs: number }
): Promise<FastifyReply> {
  const target = new URL(req.url, to.url + '/')
  const hasBody = req.body !== undefined && req.body !== null && req.method !== 'GET' && req.method !== 'HEAD'
  const sent = hasBody ? JSON.stringify(req.body) : undefined
  // who the caller is, as this node found from its key (the owner reads a scoped key's sessions and scopes itself)
  const grant = req.principal?.id === null || req.principal?.id === undefined ? 'admin' : `key:${req.principal.id}`
  const headers: Record<string, string> = forwardHeaders(opts.secret, opts.selfId, grant, req.method, target.pathname + target.search, sent)
  for (const name of KEPT) {
    const value = req.headers[name]
    if (typeof value === 'string') headers[name] = value
  }
  headers['x-request-id'] ??= req.id
  if (hasBody) headers['content-type'] = 'application/json'
  let res: Response
  let body: Buffer
  try {
    res = await fetch(target, {
      method: req.method,
      headers,
      ...(sent !== undefined ? { body: sent } : {}),
      signal: AbortSignal.timeout(opts.timeoutMs)
    })
    body = Buffer.from(await res.arrayBuffer())
  } catch (err) {
    req.log.warn({ err, node: to.nodeId }, 'cluster: the node that owns the session did not answer')
    throw new OwnerUnavailable(`The node that holds this session (${to.nodeId}) could not be reached; try again shortly (its sessions move to other nodes when it is gone)`)
  }
  if (res.status === 401) {
    // this node checked the caller's key already: the owner refused this node's signature
    req.log.error({ node: to.nodeId }, 'cluster: the owning node refused this node\'s signature; is CLUSTER_SECRET the same on every node?')
    throw new OwnerUnavailable(`The node that holds this session (${to.nodeId}) refused this node's forwarding signature (CLUSTER_SECRET differs between the nodes)`)
  }
  req.log.debug({ node: to.nodeId, status: res.status }, 'cluster: answered by the owning node')
  const type = res.headers.get('content-type')
  if (type !== null) void reply.type(type)
  void reply.header('x-status-tracker-node', to.nodeId)
  // the owner's answer, serialised and enveloped there, goes out byte for byte
  return await reply.code(res.status).send(body)
}
