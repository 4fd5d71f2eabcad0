import { randomBytes } from 'node:crypto'
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { hostname } from 'node:os'
import { join, resolve } from 'node:path'
import { parseEnv } from 'node:util'
import { Value } from '@sinclair/typebox/value'
import { EnvSchema, type Env } from '../schemas/env.js'

export interface Config {
  port: number
  host: string
  apiKey: string
  /** where the key came from, for the start-up log line (never the key itself) */
  apiKeySource: 'env' | 'file' | 'generated'
  apiKeyFile: string | null
  dataDir: string
  uploadDir: string
  databaseFile: string
  /** PostgreSQL URL (DATABASE_URL); null: the SQLite file `databaseFile` */
  databaseUrl: string | null
  maxUploadBytes: number
  maxUploadMb: number
  rateLimit: { max: number, windowMs: number }
  logLevel: Env['LOG_LEVEL']
  wa: {
    websocketUrl: string
    version: [number, number, number] | null
    testTrustRoot: string | null
    linkTimeoutMs: number
    statusChunkSize: number
  }
  statusTtlMs: number
  cleanupIntervalMs: number
  /** /metrics without the API key */
  metricsPublic: boolean
  /** null: no CORS headers; '*': any origin; else the allowed origins */
  corsOrigin: '*' | string[] | null
  healthDisconnectedMs: number
  /** how long a send waits for its session to reconnect after a drop, and how long a send interrupted by a crash waits at start */
  sendReconnectWaitMs: number
  /** longer lists answer 202 at once and are sent in the background */
  /** null (default): every send waits unless the request says `wait: false` */
  sendWaitMaxRecipients: number | null
  /** url statuses may fetch from loopback / private addresses (development and tests only) */
  allowPrivateUrls: boolean
  redisUrl: string | null
  cluster: ClusterConfig
  webhooks: {
    maxAttempts: number
    baseDelayMs: number
    maxDelayMs: number
    timeoutMs: number
    concurrency: number
  }
}

export interface ClusterConfig {
  /** several nodes share the database (DATABASE_URL is PostgreSQL); false: every session is local */
  enabled: boolean
  nodeId: string
  /** where other nodes reach this one */
  nodeUrl: string
  leaseTtlMs: number
  leaseRenewMs: number
}

export class ConfigError extends Error {
  override name = 'ConfigError'
}

/** Reads `.env` (if present) under the real environment, validates, and returns the typed config. */
export function loadConfig (env: NodeJS.ProcessEnv = process.env, opts: { envFile?: string | false } = {}): Config {
  const envFile = opts.envFile ?? '.env'
  const merged: Record<string, string | undefined> = {}
  if (envFile !== false && existsSync(envFile)) Object.assign(merged, parseEnvFile(readFileSync(envFile, 'utf8')))
  for (const key of Object.keys(EnvSchema.properties)) {
    const value = env[key]
    if (value !== undefined && value !== '') merged[key] = value
    else if (merged[key] === '') delete merged[key]
  }
  return configFromEnv(validateEnv(merged))
}

export function validateEnv (raw: Record<string, string | undefined>): Env {
  const candidate: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(raw)) {
    if (key in EnvSchema.properties && value !== undefined) candidate[key] = value
  }
  const converted = Value.Convert(EnvSchema, Value.Default(EnvSchema, candidate))
  const first = Value.Errors(EnvSchema, converted).First()
  if (first !== undefined) {
    const name = first.path.replace(/^\//, '')
    const shown = name === 'API_KEY' || name === 'WA_TEST_TRUST_ROOT' || name === 'DATABASE_URL' ? '' : ` (got ${JSON.stringify(raw[name])})`
    const why = name === 'API_KEY' ? 'must be at least 16 characters' : first.message.toLowerCase()
    throw new ConfigError(`Invalid setting ${name}: ${why}${shown}`)
  }
  return converted as Env
}

function configFromEnv (env: Env): Config {
  const dataDir = resolve(env.DATA_DIR)
  const key = resolveApiKey(env.API_KEY, dataDir)
  const version = env.WA_VERSION?.split('.').map(Number) as [number, number, number] | undefined
  return {
    port: env.PORT,
    host: env.HOST,
    apiKey: key.key,
    apiKeySource: key.source,
    apiKeyFile: key.file,
    dataDir,
    uploadDir: resolve(env.UPLOAD_DIR),
    databaseFile: join(dataDir, 'status-tracker.db'),
    databaseUrl: env.DATABASE_URL ?? null,
    maxUploadBytes: env.MAX_UPLOAD_MB * 1024 * 1024,
    maxUploadMb: env.MAX_UPLOAD_MB,
    rateLimit: { max: env.RATE_LIMIT_MAX, windowMs: env.RATE_LIMIT_WINDOW_MS },
    logLevel: env.LOG_LEVEL,
    wa: {
      websocketUrl: env.WA_WEBSOCKET_URL,
      version: version ?? null,
      testTrustRoot: env.WA_TEST_TRUST_ROOT ?? null,
      linkTimeoutMs: env.LINK_TIMEOUT_MS,
      statusChunkSize: env.STATUS_CHUNK_SIZE
    },
    statusTtlMs: Math.round(env.STATUS_TTL_HOURS * 3_600_000),
    cleanupIntervalMs: env.CLEANUP_INTERVAL_MS,
    sendReconnectWaitMs: env.SEND_RECONNECT_WAIT_MS,
    sendWaitMaxRecipients: env.SEND_WAIT_MAX_RECIPIENTS ?? null,
    allowPrivateUrls: env.ALLOW_PRIVATE_URLS,
    metricsPublic: env.METRICS_PUBLIC,
    corsOrigin: corsOrigins(env.CORS_ORIGIN),
    healthDisconnectedMs: env.HEALTH_DISCONNECTED_MS,
    redisUrl: env.REDIS_URL ?? null,
    cluster: clusterConfig(env, dataDir),
    webhooks: {
      maxAttempts: env.WEBHOOK_MAX_ATTEMPTS,
      baseDelayMs: env.WEBHOOK_BASE_DELAY_MS,
      maxDelayMs: Math.max(env.WEBHOOK_MAX_DELAY_MS, env.WEBHOOK_BASE_DELAY_MS),
      timeoutMs: env.WEBHOOK_TIMEOUT_MS,
      concurrency: env.WEBHOOK_CONCURRENCY
    }
  }
}

function clusterConfig (env: Env, dataDir: string): ClusterConfig {
  const enabled = env.DATABASE_URL !== undefined
  if (env.LEASE_RENEW_MS * 3 > env.LEASE_TTL_MS) {
    throw new ConfigError(`Invalid setting LEASE_RENEW_MS: must be at most a third of LEASE_TTL_MS (${env.LEASE_TTL_MS}), so a lease survives two missed renewals (got ${env.LEASE_RENEW_MS})`)
  }
  const host = env.HOST === '0.0.0.0' || env.HOST === '::' ? hostname() : env.HOST
  return {
    enabled,
    nodeId: env.NODE_ID ?? storedNodeId(dataDir, enabled),
    nodeUrl: (env.NODE_URL ?? `http://${host}:${env.PORT}`).replace(/\/+$/, ''),
    leaseTtlMs: env.LEASE_TTL_MS,
    leaseRenewMs: env.LEASE_RENEW_MS
  }
}

/** DATA_DIR/node-id, generated on first start in cluster mode; a single node without one is named after its host. */
function storedNodeId (dataDir: string, create: boolean): string {
  const file = join(dataDir, 'node-id')
  if (existsSync(file)) return readFileSync(file, 'utf8').trim()
  if (!create) return hostname()
  mkdirSync(dataDir, { recursive: true, mode: 0o700 })
  const id = `node-${randomBytes(6).toString('hex')}`
  writeFileSync(file, id + '\n', { mode: 0o600 })
  return id
}

function corsOrigins (value: string | undefined): Config['corsOrigin'] {
  if (value === undefined) return null
  if (value.trim() === '*') return '*'
  return value.split(',').map((o) => o.trim())
}

function resolveApiKey (fromEnv: string | undefined, dataDir: string): { key: string, source: Config['apiKeySource'], file: string | null } {
  if (fromEnv !== undefined) return { key: fromEnv, source: 'env', file: null }
  const file = join(dataDir, 'api-key')
  if (existsSync(file)) {
    const stored = readFileSync(file, 'utf8').trim()
    if (stored.length < 16) throw new ConfigError(`Invalid setting API_KEY: the stored key in ${file} is shorter than 16 characters`)
    return { key: stored, source: 'file', file }
  }
  mkdirSync(dataDir, { recursive: true, mode: 0o700 })
  const generated = randomBytes(24).toString('base64url')
  writeFileSync(file, generated + '\n', { mode: 0o600, flag: 'wx' })
  chmodSync(file, 0o600)
  return { key: generated, source: 'generated', file }
}

/** `.env` text → values, with Node's own parser (the `--env-file` rules: quotes, `#` comments, `export`). */
export function parseEnvFile (text: string): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [key, value] of Object.entries(parseEnv(text))) if (value !== undefined) out[key] = value
  return out
}
