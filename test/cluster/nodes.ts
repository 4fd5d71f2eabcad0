import { spawn, type ChildProcess } from 'node:child_process'
import { appendFileSync, mkdirSync } from 'node:fs'
import { join, resolve } from 'node:path'
import type { TestContext } from 'node:test'
import { fileURLToPath } from 'node:url'
import { freePort, waitFor } from '../helper.js'

// Cluster nodes as real child processes (`node --import tsx src/server.ts`), each with its own DATA_DIR and
// port, sharing the database, Redis and the uploads folder. A node can be SIGKILLed and started again with
// the same NODE_ID, port and folders.

const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)))
const TSX = import.meta.resolve('tsx')
export const CLUSTER_KEY = 'cluster-test-key-0123456789abcdef'

export interface ClusterNode {
  nodeId: string
  base: string
  child: ChildProcess
  exited: Promise<void>
  output: string[]
  /** SIGTERM (then SIGKILL after 10 s) */
  stop: () => Promise<void>
}

export interface NodePlan { nodeId: string, port: number, dir: string }

export async function planNode (dir: string, nodeId: string): Promise<NodePlan> {
  return { nodeId, port: await freePort(), dir: join(dir, nodeId) }
}

export async function startNode (t: TestContext, plan: NodePlan, env: Record<string, string>): Promise<ClusterNode> {
  mkdirSync(plan.dir, { recursive: true })
  const inherited: Record<string, string> = {}
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !/^(API_KEY|DATA_DIR|UPLOAD_DIR|LOG_LEVEL|PORT|HOST|DATABASE_URL|REDIS_URL|NODE_URL|NODE_ID|CLUSTER_SECRET)$/.test(k)) inherited[k] = v
  const base = `http://127.0.0.1:${plan.port}`
  const child = spawn(process.execPath, ['--import', TSX, join(ROOT, 'src', 'server.ts')], {
    cwd: plan.dir,
    env: {
      ...inherited,
      TSX_TSCONFIG_PATH: join(ROOT, 'tsconfig.json'),
      PORT: String(plan.port),
      HOST: '127.0.0.1',
      API_KEY: CLUSTER_KEY,
      DATA_DIR: join(plan.dir, 'data'),
      NODE_ID: plan.nodeId,
      NODE_URL: base,
      LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'warn',
      RATE_LIMIT_MAX: '1000000',
      ...env
    },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  const output: string[] = []
  const logFile = process.env.CLUSTER_TEST_LOG_DIR === undefined ? null : join(process.env.CLUSTER_TEST_LOG_DIR, `${plan.nodeId}.log`)
  const keep = (chunk: Buffer): void => {
    output.push(...chunk.toString('utf8').split('\n').filter((l) => l !== ''))
    if (logFile !== null) appendFileSync(logFile, chunk)
  }
  child.stdout?.on('data', keep)
  child.stderr?.on('data', keep)
  const exited = new Promise<void>((resolve) => { child.once('exit', () => { resolve() }) })
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return
    child.kill('SIGTERM')
    const timer = setTimeout(() => { child.kill('SIGKILL') }, 10_000)
    await exited
    clearTimeout(timer)
  }
  t.after(stop)
  await waitFor(async () => {
    if (child.exitCode !== null) throw new Error(`node ${plan.nodeId} exited (${child.exitCode}):\n${output.slice(-30).join('\n')}`)
    return await fetch(`${base}/api/health`, { headers: { 'x-api-key': CLUSTER_KEY } }).then((r) => r.ok, () => false)
  }, 60_000, `node ${plan.nodeId} to answer`)
  return { nodeId: plan.nodeId, base, child, exited, output, stop }
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
