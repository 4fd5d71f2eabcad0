import { test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parse } from 'yaml'
import { EnvSchema } from '../../schemas/env.js'
import { loadConfig, parseEnvFile, type Config } from '../../src/config.js'

// compose.yaml and compose.cluster.yaml as Compose reads them: compose.yaml alone holds the service alone and
// nothing else (podman-compose 1.0.3, Debian 12's, ignores profiles and starts every service of the files it is
// given), and compose.cluster.yaml, merged onto it, adds the `cluster` profile's two nodes on PostgreSQL and
// Redis. Every variable a Status Tracker container gets from the files is a setting of schemas/env.ts that the
// service accepts, on top of a `.env` made from .env.example (env_file) or of no `.env` at all (a fresh
// checkout: the file is optional, and the service alone generates its key); the nodes share what cluster.md
// says they share and differ in what it says they own. scripts/image-test.sh runs a plain `podman-compose up -d` on
// compose.yaml on the image CI builds and the cluster dry on both files; this checks what that run cannot reach.

const ROOT = resolve(import.meta.dirname, '..', '..')
const FILE = join(ROOT, 'compose.yaml')
const CLUSTER_FILE = join(ROOT, 'compose.cluster.yaml')

interface Service {
  image?: string
  build?: string | { context?: string }
  env_file?: string | Array<string | { path: string, required?: boolean }>
  environment?: Record<string, string | number | boolean | null>
  profiles?: string[]
  ports?: string[]
  volumes?: string[]
  depends_on?: Record<string, { condition?: string }>
  healthcheck?: { test?: string[] | string }
}
interface ComposeFile { services: Record<string, Service>, volumes?: Record<string, unknown>, [key: `x-${string}`]: unknown }

/**
 * Compose's interpolation, limited to the forms podman-compose 1.0.3 (Debian 12) also reads: `$$`, `$NAME`,
 * `${NAME}`, `${NAME:-default}`, `${NAME-default}`, `${NAME:?error}` and `${NAME?error}`, default and error
 * not empty. Anything else (an empty default, `:+`, nesting) fails here, as 1.0.3 would leave it unreplaced.
 */
function interpolate (value: string, vars: Record<string, string>): string {
  return value.replace(/\$(?:(\$)|([A-Za-z_][A-Za-z0-9_]*)|\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?)-([^}]+)|(:?)\?([^}]+))?\}|(.?))/g,
    (_m, dollar?: string, plain?: string, braced?: string, dColon?: string, dflt?: string, eColon?: string, error?: string, other?: string) => {
      if (dollar !== undefined) return '$'
      if (other !== undefined) throw new Error(`compose.yaml: "${value}" has a $ that podman-compose 1.0.3 cannot interpolate`)
      const name = (plain ?? braced) as string
      const set = vars[name]
      if (dflt !== undefined) return set === undefined || (dColon === ':' && set === '') ? dflt : set
      if (error !== undefined && (set === undefined || (eColon === ':' && set === ''))) throw new Error(`required variable ${name} is missing a value: ${error}`)
      return set ?? ''
    })
}

/** A file as YAML reads it, merge keys (<<) resolved as Compose resolves them; anchors stay within the file. */
const parsed = (path: string): ComposeFile => parse(readFileSync(path, 'utf8'), { merge: true }) as ComposeFile

/**
 * Every string of the files interpolated with `vars` (what `docker compose -f … -f … config` shows), the later
 * files' services and volumes added to the first's. The files share no service and no volume (a test below
 * checks it), so the union is Compose's merge; their `x-` fragments stay each file's own.
 */
function resolved (vars: Record<string, string>, paths: string[] = [FILE]): ComposeFile {
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return interpolate(v, vars)
    if (Array.isArray(v)) return v.map(walk)
    if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]))
    return v
  }
  const files = paths.map((p) => walk(parsed(p)) as ComposeFile)
  return {
    services: Object.assign({}, ...files.map((f) => f.services)) as Record<string, Service>,
    volumes: Object.assign({}, ...files.map((f) => f.volumes ?? {})) as Record<string, unknown>
  }
}

const API_KEY = 'compose-test-key-0123456789abcdef'
const POSTGRES_PASSWORD = 'a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6'
const CLUSTER_SECRET = 'compose-test-cluster-secret-0123456789abcdef'
/** the `.env` a user makes: .env.example's settings plus the three values compose.yaml's header asks for */
const DOT_ENV = readFileSync(join(ROOT, '.env.example'), 'utf8') +
  `\nAPI_KEY=${API_KEY}\nPOSTGRES_PASSWORD=${POSTGRES_PASSWORD}\nCLUSTER_SECRET=${CLUSTER_SECRET}\n`
const VARS = parseEnvFile(DOT_ENV)

const inProfile = (s: Service, profile: string | null): boolean => profile === null ? s.profiles === undefined : (s.profiles ?? []).includes(profile)

/** `source:target[:mode]` of a service's volumes */
function mounts (s: Service): Array<{ source: string, target: string }> {
  return (s.volumes ?? []).map((v) => {
    const [source, target] = v.split(':')
    assert.ok(source !== undefined && target !== undefined && target.startsWith('/'), `volume "${v}" is source:target`)
    return { source, target }
  })
}

/**
 * The container's environment: the env file (`.env`, `vars` here; `{}` when there is none), then the service's
 * `environment`, as Compose merges them.
 */
function containerEnv (name: string, s: Service, vars = VARS): Record<string, string> {
  assert.deepEqual(s.env_file, [{ path: '.env', required: false }], `${name} reads its settings from .env when there is one`)
  const env: Record<string, string> = { ...vars }
  for (const [key, value] of Object.entries(s.environment ?? {})) {
    assert.ok(key in EnvSchema.properties, `${name}: ${key} is not a setting of schemas/env.ts`)
    assert.ok(value !== null, `${name}: ${key} has no value`)
    env[key] = String(value)
  }
  return env
}

/** The service's settings as it validates them at start; a value it refuses throws `Invalid setting …`. */
function configOf (name: string, s: Service, vars = VARS): Config {
  const env = containerEnv(name, s, vars)
  return loadConfig(env, { envFile: false })
}

/** What a service publishes: `[address:]hostPort:containerPort` */
function published (s: Service): Array<{ address: string | undefined, host: string, container: string }> {
  return (s.ports ?? []).map((p) => {
    const m = /^(?:([0-9.]+):)?([0-9]+):([0-9]+)$/.exec(p)
    assert.ok(m !== null, `port "${p}" is [address:]host:container`)
    return { address: m[1], host: m[2] as string, container: m[3] as string }
  })
}

/** compose.yaml alone: what a plain `up -d` on it starts, whatever the Compose */
const single = resolved(VARS)
/** compose.yaml with compose.cluster.yaml merged onto it */
const file = resolved(VARS, [FILE, CLUSTER_FILE])
const image = single.services['status-tracker']?.image

test('compose.yaml: the service alone and nothing else, from the Dockerfile\'s image, SQLite and uploads in named volumes, the key from .env when set', () => {
  // podman-compose 1.0.3 ignores profiles: every service of the file is one a plain `up -d` starts
  assert.deepEqual(Object.keys(single.services), ['status-tracker'], 'compose.yaml has the service alone')
  const s = single.services['status-tracker'] as Service
  assert.equal(s.profiles, undefined, 'in no profile: Docker Compose and newer podman-compose start it too')
  assert.equal(resolved({ API_KEY }).services['status-tracker']?.image, 'status-tracker:latest')
  assert.equal(resolved({ API_KEY, STATUS_TRACKER_IMAGE: 'localhost/status-tracker:ci' }).services['status-tracker']?.image, 'localhost/status-tracker:ci')
  const context = typeof s.build === 'string' ? s.build : s.build?.context
  assert.equal(context, '.')
  assert.ok(existsSync(join(ROOT, 'Dockerfile')))

  const config = configOf('status-tracker', s)
  assert.equal(config.apiKey, API_KEY)
  assert.equal(config.apiKeySource, 'env')
  // .env.example's DATA_DIR=./data and UPLOAD_DIR=./uploads would point into the read-only /app: overridden
  assert.equal(config.dataDir, '/data')
  assert.equal(config.uploadDir, '/uploads')
  assert.equal(config.databaseUrl, null, 'SQLite')
  assert.equal(config.cluster.enabled, false)
  assert.equal(config.host, '0.0.0.0')

  const declared = Object.keys(single.volumes ?? {})
  const m = mounts(s)
  for (const dir of [config.dataDir, config.uploadDir]) {
    const mount = m.find((x) => x.target === dir)
    assert.ok(mount !== undefined && declared.includes(mount.source), `${dir} is a named volume declared under volumes:`)
  }

  // the host's loopback by default, on STATUS_TRACKER_PORT when set, to the port the service listens on
  assert.deepEqual(published(s), [{ address: '127.0.0.1', host: '3000', container: String(config.port) }])
  assert.deepEqual(published(resolved({ API_KEY, STATUS_TRACKER_PORT: '43117' }).services['status-tracker'] as Service),
    [{ address: '127.0.0.1', host: '43117', container: String(config.port) }])

  // nothing the cluster needs: a .env holding API_KEY alone gives the container that key
  assert.doesNotThrow(() => resolved({ API_KEY }))
  assert.equal(configOf('status-tracker', resolved({ API_KEY }).services['status-tracker'] as Service, { API_KEY }).apiKey, API_KEY)
  // a key the service refuses (under 16 characters) stops it at start
  assert.throws(() => configOf('status-tracker', resolved({ ...VARS, API_KEY: 'short' }).services['status-tracker'] as Service, { ...VARS, API_KEY: 'short' }), /Invalid setting API_KEY/)
})

test('compose.yaml on a fresh checkout: no .env, no variable set; the service generates its key into the data volume and keeps it', () => {
  // Compose reads the files without a variable (no ${…:?…} left in compose.yaml) and without .env (required: false)
  const fresh = resolved({})
  const s = fresh.services['status-tracker'] as Service
  assert.deepEqual(s.env_file, [{ path: '.env', required: false }])
  assert.equal(s.image, 'status-tracker:latest')
  const env = containerEnv('status-tracker', s, {})
  assert.equal(env.API_KEY, undefined, 'no key set by the file')
  assert.equal(env.DATA_DIR, '/data')
  // the service's first start there, DATA_DIR standing in for the `data` volume: a key generated into
  // DATA_DIR/api-key, mode 0600; the next start (a restart, a new container on the volume) reads the same one
  const volume = mkdtempSync(join(tmpdir(), 'st-compose-data-'))
  try {
    const first = loadConfig({ ...env, DATA_DIR: volume }, { envFile: false })
    assert.equal(first.apiKeySource, 'generated')
    assert.equal(first.apiKeyFile, join(volume, 'api-key'))
    assert.equal(statSync(join(volume, 'api-key')).mode & 0o777, 0o600)
    const again = loadConfig({ ...env, DATA_DIR: volume }, { envFile: false })
    assert.deepEqual([again.apiKeySource, again.apiKey], ['file', first.apiKey])
  } finally {
    rmSync(volume, { recursive: true, force: true })
  }
  // where the README and docs/container.md say to read it: the service's name and its DATA_DIR in the container
  const read = `docker compose exec status-tracker cat ${env.DATA_DIR}/api-key`
  for (const doc of ['README.md', join('docs', 'container.md')]) assert.ok(readFileSync(join(ROOT, doc), 'utf8').includes(read), `${doc} says \`${read}\``)
})

test('compose.cluster.yaml: merged onto compose.yaml, the profile `cluster` adds every service of its own and nothing else', () => {
  const own = parsed(CLUSTER_FILE)
  const base = parsed(FILE)
  // a union: neither a service nor a volume of compose.yaml is redefined (Compose would merge them field by field)
  for (const n of Object.keys(own.services)) {
    assert.equal(base.services[n], undefined, `${n} is defined in one file only`)
    assert.deepEqual(own.services[n]?.profiles, ['cluster'], `${n} is in the profile cluster`)
  }
  for (const v of Object.keys(own.volumes ?? {})) assert.ok(!(v in (base.volumes ?? {})), `volume ${v} is declared in one file only`)
  // without the profile the merged files start what compose.yaml alone starts
  assert.deepEqual(Object.keys(file.services).filter((n) => inProfile(file.services[n] as Service, null)), ['status-tracker'])
  // YAML anchors do not cross files: the cluster file's copies of compose.yaml's fragments are the same
  for (const fragment of ['x-status-tracker', 'x-environment'] as const) {
    assert.ok(own[fragment] !== undefined, `compose.cluster.yaml has its own ${fragment}`)
    assert.deepEqual(own[fragment], base[fragment], `${fragment} in compose.cluster.yaml is compose.yaml's`)
  }
  // the database password and the key are required by the cluster only (alone, each node would generate its own key)
  assert.doesNotThrow(() => resolved({ API_KEY }))
  assert.doesNotThrow(() => resolved({}))
  assert.throws(() => resolved({ API_KEY }, [FILE, CLUSTER_FILE]), /required variable POSTGRES_PASSWORD is missing a value: set POSTGRES_PASSWORD in \.env/)
  assert.throws(() => resolved({ POSTGRES_PASSWORD }, [FILE, CLUSTER_FILE]), /required variable API_KEY is missing a value: set API_KEY in \.env, the same key for every node/)
})

test('compose.cluster.yaml: the cluster profile runs two nodes on one PostgreSQL and one Redis, each node with its own id, address and data', () => {
  const names = Object.keys(file.services).filter((n) => inProfile(file.services[n] as Service, 'cluster')).sort()
  assert.deepEqual(names, ['node-a', 'node-b', 'postgres', 'redis'])
  const nodes = names.filter((n) => file.services[n]?.image === image)
  assert.deepEqual(nodes, ['node-a', 'node-b'])
  const configs = nodes.map((n) => configOf(n, file.services[n] as Service))
  const [a, b] = configs as [Config, Config]

  // shared: the key, the database, Redis, the cluster secret (docs/cluster.md, "What the nodes share")
  for (const c of configs) {
    assert.equal(c.cluster.enabled, true)
    assert.equal(c.apiKey, API_KEY)
    assert.equal(c.cluster.secret, CLUSTER_SECRET)
  }
  assert.ok(CLUSTER_SECRET.length >= 32)
  assert.equal(a.databaseUrl, b.databaseUrl)
  assert.equal(a.redisUrl, b.redisUrl)
  assert.notEqual(a.redisUrl, null)

  // the database URL names the postgres service with the user, password and database it creates
  const pg = file.services.postgres as Service
  const db = new URL(a.databaseUrl as string)
  assert.equal(db.hostname, 'postgres')
  assert.equal(db.port, '5432')
  assert.equal(db.username, pg.environment?.POSTGRES_USER)
  assert.equal(db.password, POSTGRES_PASSWORD)
  assert.equal(pg.environment?.POSTGRES_PASSWORD, POSTGRES_PASSWORD)
  assert.equal(db.pathname, `/${String(pg.environment?.POSTGRES_DB)}`)
  assert.match(String(pg.healthcheck?.test), new RegExp(`pg_isready -U ${db.username} -d ${String(pg.environment?.POSTGRES_DB)}`))
  const redis = new URL(a.redisUrl as string)
  assert.equal(redis.hostname, 'redis')
  assert.equal(redis.port || '6379', '6379')

  // the nodes start once both are healthy, and each has a health check to wait for
  for (const n of nodes) {
    const deps = file.services[n]?.depends_on ?? {}
    for (const dep of ['postgres', 'redis']) {
      assert.equal(deps[dep]?.condition, 'service_healthy', `${n} waits for ${dep}`)
      assert.ok(file.services[dep]?.healthcheck?.test !== undefined, `${dep} has a healthcheck`)
    }
  }

  // their own: NODE_ID, NODE_URL (the node's name on the compose network, on the port it listens on), DATA_DIR
  assert.notEqual(a.cluster.nodeId, b.cluster.nodeId)
  nodes.forEach((n, i) => {
    const c = configs[i] as Config
    const url = new URL(c.cluster.nodeUrl)
    assert.equal(url.hostname, n, `${n}'s NODE_URL names the service`)
    assert.equal(url.port, String(c.port))
    assert.deepEqual(published(file.services[n] as Service).map((p) => [p.address, p.container]), [['127.0.0.1', String(c.port)]])
  })
  assert.notEqual(a.cluster.nodeUrl, b.cluster.nodeUrl)
  const volumeAt = (n: string, dir: string): string | undefined => mounts(file.services[n] as Service).find((m) => m.target === dir)?.source
  const dataVolumes = Object.keys(file.services).map((n) => volumeAt(n, '/data')).filter((v) => v !== undefined)
  assert.equal(new Set(dataVolumes).size, dataVolumes.length, 'no two containers share a /data volume')
  // media: one UPLOAD_DIR for every node (the file runs no S3-compatible server), not the single service's
  for (const c of configs) assert.equal(c.media.store, 'local')
  const uploads = nodes.map((n, i) => volumeAt(n, (configs[i] as Config).uploadDir))
  assert.ok(uploads[0] !== undefined && uploads.every((u) => u === uploads[0]), 'the nodes share one uploads volume')
  assert.notEqual(uploads[0], volumeAt('status-tracker', '/uploads'))
  assert.notEqual(published(file.services['node-a'] as Service)[0]?.host, published(file.services['node-b'] as Service)[0]?.host)

  // a bucket instead (docs/container.md): MEDIA_STORE=s3 and the S3_* settings in .env reach every node unchanged
  const S3_VARS = { ...VARS, MEDIA_STORE: 's3', S3_ENDPOINT: 'https://s3.example.net', S3_BUCKET: 'status-media', S3_ACCESS_KEY_ID: 'compose-test-id', S3_SECRET_ACCESS_KEY: 'compose-test-secret-0123456789', S3_FORCE_PATH_STYLE: 'true' }
  for (const n of [...nodes, 'status-tracker']) {
    const c = configOf(n, resolved(S3_VARS, [FILE, CLUSTER_FILE]).services[n] as Service, S3_VARS)
    assert.deepEqual(c.media, { store: 's3', s3: { endpoint: 'https://s3.example.net', bucket: 'status-media', region: 'us-east-1', credentials: { accessKeyId: 'compose-test-id', secretAccessKey: 'compose-test-secret-0123456789' }, forcePathStyle: true } }, `${n} keeps media in the bucket`)
  }
})

test('compose.yaml, compose.cluster.yaml: each declares every named volume its services mount, and uses every one it declares', () => {
  for (const path of [FILE, CLUSTER_FILE]) {
    const f = resolved(VARS, [path])
    const declared = Object.keys(f.volumes ?? {}).sort()
    const used = [...new Set(Object.values(f.services).flatMap((s) => mounts(s).map((m) => m.source)))].sort()
    for (const source of used) assert.ok(!source.startsWith('.') && !source.startsWith('/'), `${source}: named volumes only, no host paths`)
    assert.deepEqual(used, declared, path)
  }
})
