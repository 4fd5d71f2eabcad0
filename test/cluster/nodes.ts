import { join } from 'node:path'
import type { TestContext } from 'node:test'
import { freePort } from '../support/ports.js'
import { spawnService, type ServiceProc } from '../support/service.js'

// Cluster nodes as real child processes (spawnService from the sources, as the suite measures coverage of
// them), each with its own DATA_DIR and port, sharing the database, Redis and the uploads folder. A node can
// be SIGKILLed and started again with the same NODE_ID, port and folders.

export const CLUSTER_KEY = 'cluster-test-key-0123456789abcdef'

export interface ClusterNode extends ServiceProc {
  nodeId: string
  /** every line it wrote (stdout and stderr) */
  output: string[]
}

export interface NodePlan { nodeId: string, port: number, dir: string }

export async function planNode (dir: string, nodeId: string): Promise<NodePlan> {
  return { nodeId, port: await freePort(), dir: join(dir, nodeId) }
}

/** Starts the node (stopped after the test); CLUSTER_TEST_LOG_DIR keeps each node's log there as `<nodeId>.log`. */
export async function startNode (t: TestContext, plan: NodePlan, env: Record<string, string>, opts: { readyTimeoutMs?: number } = {}): Promise<ClusterNode> {
  const svc = await spawnService({
    t,
    from: 'source',
    dir: plan.dir,
    port: plan.port,
    name: plan.nodeId,
    apiKey: CLUSTER_KEY,
    env: { NODE_ID: plan.nodeId, NODE_URL: `http://127.0.0.1:${plan.port}`, RATE_LIMIT_MAX: '1000000', ...env },
    ...(process.env.CLUSTER_TEST_LOG_DIR !== undefined ? { logDir: process.env.CLUSTER_TEST_LOG_DIR } : {}),
    ...opts
  })
  return Object.assign(svc, { nodeId: plan.nodeId, output: svc.lines })
}

/** The service's API with the cluster key; answers unwrapped, or the raw status and body on failure. */
export function nodeApi (base: string) {
  const call = async <T = unknown>(method: string, path: string, body?: unknown): Promise<{ status: number, data: T, body: string }> => {
    const res = await fetch(`${base}/api${path}`, {
      method,
      headers: { 'x-api-key': CLUSTER_KEY, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(120_000)
    })
    const text = await res.text()
    const parsed = text === '' ? {} : JSON.parse(text) as { data?: T }
    return { status: res.status, data: parsed.data as T, body: text }
  }
  const ok = async <T = unknown>(method: string, path: string, body?: unknown): Promise<T> => {
    const r = await call<T>(method, path, body)
    if (r.status !== 200) throw new Error(`${method} ${path} → ${r.status}: ${r.body.slice(0, 300)}`)
    return r.data
  }
  return { call, get: async <T = unknown>(path: string) => await ok<T>('GET', path), post: async <T = unknown>(path: string, body?: unknown) => await ok<T>('POST', path, body) }
}

export interface ClusterView { self: string, nodes: Array<{ nodeId: string, url: string, sessions: string[], lastSeen: string }> }

/** nodeId → the sessions it owns, as a node reports it */
export async function ownership (base: string): Promise<Record<string, string[]>> {
  const view = await nodeApi(base).get<ClusterView>('/cluster')
  return Object.fromEntries(view.nodes.map((n) => [n.nodeId, n.sessions]))
}
