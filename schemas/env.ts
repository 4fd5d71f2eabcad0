import { Type, type Static } from '@sinclair/typebox'

const Int = (def: number, min: number, max: number, description: string) =>
  Type.Integer({ default: def, minimum: min, maximum: max, description })

/** Every setting the service reads from the environment (or a `.env` file). */
export const EnvSchema = Type.Object({
  PORT: Int(3000, 0, 65535, 'HTTP port'),
  HOST: Type.String({ default: '0.0.0.0', minLength: 1, description: 'Interface to listen on' }),
  API_KEY: Type.Optional(Type.String({ minLength: 16, description: 'API key; generated into DATA_DIR/api-key when unset' })),
  DATA_DIR: Type.String({ default: './data', minLength: 1, description: 'SQLite database and generated API key' }),
  DATABASE_URL: Type.Optional(Type.String({ pattern: '^[Pp][Oo][Ss][Tt][Gg][Rr][Ee][Ss]([Qq][Ll])?://', description: 'PostgreSQL instead of the embedded SQLite: postgres://user:password@host:port/database' })),
  UPLOAD_DIR: Type.String({ default: './uploads', minLength: 1, description: 'Uploaded media files' }),
  MAX_UPLOAD_MB: Int(50, 1, 2048, 'Largest accepted upload, in MB'),
  // where uploads live: this node's disk (UPLOAD_DIR), or an S3-compatible bucket that every node reaches
  MEDIA_STORE: Type.Union([Type.Literal('local'), Type.Literal('s3')], { default: 'local', description: 'Where uploaded media is kept: `local` (UPLOAD_DIR) or `s3` (an S3-compatible bucket, S3_* settings; UPLOAD_DIR then only holds files being sent)' }),
  S3_ENDPOINT: Type.Optional(Type.String({ pattern: '^https?://[^\\s]+$', description: 'MEDIA_STORE=s3: the S3 API address, e.g. https://s3.eu-west-1.amazonaws.com or a MinIO / Garage / Ceph address; unset: AWS S3 for S3_REGION' })),
  S3_BUCKET: Type.Optional(Type.String({ pattern: '^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$', description: 'MEDIA_STORE=s3: the bucket (it must exist); required then' })),
  S3_REGION: Type.String({ default: 'us-east-1', minLength: 1, description: 'MEDIA_STORE=s3: the region requests are signed for' }),
  S3_ACCESS_KEY_ID: Type.Optional(Type.String({ minLength: 1, description: 'MEDIA_STORE=s3: access key id; unset with S3_SECRET_ACCESS_KEY: the AWS SDK\'s default credential chain (environment, profile, instance role)' })),
  S3_SECRET_ACCESS_KEY: Type.Optional(Type.String({ minLength: 1, description: 'MEDIA_STORE=s3: secret access key (never logged nor echoed)' })),
  S3_FORCE_PATH_STYLE: Type.Boolean({ default: false, description: 'MEDIA_STORE=s3: address the bucket in the path (`endpoint/bucket/key`) instead of the host name; most self-hosted stores (MinIO, Garage, Ceph) need it' }),
  RATE_LIMIT_MAX: Int(300, 1, 10_000_000, 'Requests per client IP per window'),
  RATE_LIMIT_WINDOW_MS: Int(900_000, 1000, 86_400_000, 'Rate-limit window in milliseconds'),
  LOG_LEVEL: Type.Union(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l)), { default: 'info' }),
  WA_WEBSOCKET_URL: Type.String({ default: 'wss://web.whatsapp.com/ws/chat', pattern: '^wss?://', description: 'Platform WebSocket address' }),
  WA_VERSION: Type.Optional(Type.String({ pattern: '^[0-9]+\\.[0-9]+\\.[0-9]+$', description: 'Web client version, e.g. 2.3000.1027934701; default Baileys\' built-in one' })),
  WA_TEST_TRUST_ROOT: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9+/]{43}=$', description: 'TEST ONLY: base64 Curve25519 public key trusted as the certificate root (the emulator\'s)' })),
  ALLOW_PRIVATE_URLS: Type.Boolean({ default: false, description: 'DEVELOPMENT AND TESTS ONLY: let url statuses fetch from, and webhooks deliver to, loopback, private, link-local and unique-local addresses' }),
  STATUS_TTL_HOURS: Type.Number({ default: 24, exclusiveMinimum: 0, maximum: 8760, description: 'Status lifetime in hours' }),
  CLEANUP_INTERVAL_MS: Int(300_000, 100, 86_400_000, 'How often expired statuses and unused uploads are removed'),
  INSIGHTS_RETENTION_DAYS: Type.Number({ default: 90, minimum: 0, maximum: 3650, description: 'How long a status\'s insights summary is kept after it was posted (fractions allowed); 0: none is kept past expiry' }),
  LINK_TIMEOUT_MS: Int(600_000, 1000, 86_400_000, 'Stop refreshing QR / pairing codes after this long without a link'),
  STATUS_CHUNK_SIZE: Int(256, 1, 5000, 'Recipients per status stanza for large lists'),
  STATUS_STANZA: Type.Union([Type.Literal('message'), Type.Literal('status')], { default: 'message', description: 'The element a status is posted in: `message` (the one public clients post and the server accepts) or `status` (WA Web\'s newer `<status>` publish stanza; docs/platform.md)' }),
  WEBHOOK_MAX_ATTEMPTS: Int(12, 1, 100, 'Attempts per webhook delivery before it is marked failed'),
  WEBHOOK_BASE_DELAY_MS: Int(5000, 1, 86_400_000, 'Delay before the second attempt of a webhook delivery; later delays grow exponentially'),
  WEBHOOK_MAX_DELAY_MS: Int(43_200_000, 1, 604_800_000, 'Longest delay between two attempts (the last one)'),
  WEBHOOK_TIMEOUT_MS: Int(10_000, 100, 300_000, 'Time a webhook receiver has to answer (connecting included)'),
  WEBHOOK_CONCURRENCY: Int(8, 1, 256, 'Webhook deliveries in flight at once'),
  WEBHOOK_RETENTION_HOURS: Type.Number({ default: 168, exclusiveMinimum: 0, maximum: 8760, description: 'How long webhook delivery rows (with their bodies and attempts) are kept (fractions allowed)' }),
  EVENTS_RETENTION_HOURS: Type.Number({ default: 24, exclusiveMinimum: 0, maximum: 8760, description: 'How long the event log keeps events for catch-up (GET /api/events, socket.io auth.after)' }),
  METRICS_PUBLIC: Type.Boolean({ default: false, description: 'Serve /metrics without the API key (and without the rate limit)' }),
  CORS_ORIGIN: Type.Optional(Type.String({
    pattern: '^(\\*|https?://[^/\\s,]+(\\s*,\\s*https?://[^/\\s,]+)*)$',
    description: 'Origins allowed to call the API from a browser: `*` or a comma-separated list (unset: no CORS headers)'
  })),
  TRUST_PROXY: Type.Optional(Type.String({
    pattern: '^(true|false|[0-9]{1,2}|[0-9A-Fa-f:.]+(/[0-9]{1,3})?(\\s*,\\s*[0-9A-Fa-f:.]+(/[0-9]{1,3})?)*)$',
    description: 'Behind a reverse proxy: `true` (trust every hop), a hop count (1–99), or the proxies\' addresses / CIDRs, comma-separated. ' +
      'The rate limit and the logs then use the client address from X-Forwarded-For. Default false: the socket\'s address'
  })),
  HEALTH_DISCONNECTED_MS: Int(120_000, 100, 86_400_000, 'A linked session disconnected longer than this makes /api/health report degraded'),
  CLIENT_EXPIRY_WARN_DAYS: Int(7, 0, 365, 'Days before the client expiration the platform announced from which /api/health reports degraded and a warning is logged daily; 0: only once it has passed'),
  SESSION_START_CONCURRENCY: Int(4, 1, 256, 'Stored sessions reconnecting at once at start: each holds its place until its handshake is over'),
  SESSION_TAKEOVER_CONCURRENCY: Int(16, 1, 256, 'Sessions reconnecting at once when this node takes sessions over in a cluster (a dead node\'s share, a hand-over): a failover is a burst of logins that waits on the platform more than on the CPU'),
  SESSION_START_JITTER_MS: Int(250, 0, 60_000, 'Longest random pause before each of a start\'s first handshakes, so nodes starting together do not connect in step'),
  SEND_RECONNECT_WAIT_MS: Int(60_000, 100, 3_600_000, 'How long a send interrupted by a dropped link (or by a restart) waits for its session to reconnect before it ends partial; also how long a post, like, reply or view that arrives while its linked session reconnects waits before answering 500'),
  SEND_WAIT_MAX_RECIPIENTS: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000, description: 'Unset (default): every send-status request without `wait: false` waits for the end of the send (200), as the seed contract says. Set: the longest recipient list a request waits for; longer lists answer 202 at once and go out in the background' })),
  SCHEDULE_GRACE_MS: Int(900_000, 0, 604_800_000, 'A scheduled run due this long ago or less still fires after a restart or failover (flagged late); an older one is recorded missed'),
  SCHEDULE_ALLOW_SECONDS: Type.Boolean({ default: false, description: 'TESTS ONLY: accept `repeat.unit: seconds` in scheduled statuses' }),
  SPEED_TRICKS_OFF: Type.Optional(Type.String({ description: 'Speed tricks to turn off, comma-separated names, or `all` (docs/operations.md, "Speed tricks"): each then takes its plain path, which answers the same, only slower. For checking behaviour and measuring; unset: every trick on' })),
  SEND_MAX_STATUSES_PER_DAY: Int(0, 0, 1_000_000, 'Posts per session in any 24 hours; over it send-status answers 429 with Retry-After and scheduled runs wait (0: no limit)'),
  SEND_MAX_RECIPIENTS_PER_DAY: Int(0, 0, 100_000_000, 'Recipients per session in any 24 hours, summed over its posts (0: no limit)'),
  // several nodes (cluster mode: DATABASE_URL is PostgreSQL)
  REDIS_URL: Type.Optional(Type.String({ pattern: '^rediss?://', description: 'Redis for socket.io across nodes (@socket.io/redis-adapter): QR and pairing codes reach clients on any node, and a revoked key\'s sockets close on every node at once (logged events reach every node without it)' })),
  NODE_URL: Type.Optional(Type.String({ pattern: '^https?://[^\\s]+$', description: 'Address other nodes use to reach this one (cluster mode); default http://<hostname>:<PORT>' })),
  NODE_ID: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9_.-]{1,64}$', description: 'This node\'s name in the cluster; default generated once into DATA_DIR/node-id' })),
  CLUSTER_SECRET: Type.Optional(Type.String({ minLength: 32, description: 'Cluster mode: the secret nodes sign requests they pass to each other with (HMAC-SHA256), at least 32 characters, the same on every node; unset: generated once and stored in the shared database' })),
  LEASE_TTL_MS: Int(5000, 300, 600_000, 'A session lease lasts this long unless its owner renews it; a dead node\'s sessions open elsewhere this long after it died, give or take one LEASE_RENEW_MS, plus a login. A node whose renewals fail for LEASE_TTL_MS - LEASE_RENEW_MS ends its sockets'),
  LEASE_RENEW_MS: Int(1000, 100, 200_000, 'How often a node renews its leases, beats its heartbeat, looks for orphaned sessions and evens out the spread (seven small queries a round, one lease row rewritten per session it holds); at most LEASE_TTL_MS / 3'),
  REBALANCE_BATCH: Int(10, 1, 1000, 'Cluster mode: most sessions on their way to one node at once when the nodes even out their spread (a node joined or came back)')
})

export type Env = Static<typeof EnvSchema>
