import { Type, type Static } from '@sinclair/typebox'

const Int = (def: number, min: number, max: number, description: string) =>
  Type.Integer({ default: def, minimum: min, maximum: max, description })

/** Every setting the service reads from the environment (or a `.env` file). */
export const EnvSchema = Type.Object({
  PORT: Int(3000, 0, 65535, 'HTTP port'),
  HOST: Type.String({ default: '0.0.0.0', minLength: 1, description: 'Interface to listen on' }),
  API_KEY: Type.Optional(Type.String({ minLength: 16, description: 'API key; generated into DATA_DIR/api-key when unset' })),
  DATA_DIR: Type.String({ default: './data', minLength: 1, description: 'SQLite database and generated API key' }),
  UPLOAD_DIR: Type.String({ default: './uploads', minLength: 1, description: 'Uploaded media files' }),
  MAX_UPLOAD_MB: Int(50, 1, 2048, 'Largest accepted upload, in MB'),
  RATE_LIMIT_MAX: Int(300, 1, 10_000_000, 'Requests per client IP per window'),
  RATE_LIMIT_WINDOW_MS: Int(900_000, 1000, 86_400_000, 'Rate-limit window in milliseconds'),
  LOG_LEVEL: Type.Union(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l)), { default: 'info' }),
  WA_WEBSOCKET_URL: Type.String({ default: 'wss://web.whatsapp.com/ws/chat', pattern: '^wss?://', description: 'Platform WebSocket address' }),
  WA_VERSION: Type.Optional(Type.String({ pattern: '^[0-9]+\\.[0-9]+\\.[0-9]+$', description: 'Web client version, e.g. 2.3000.1027934701; default Baileys\' built-in one' })),
  WA_TEST_TRUST_ROOT: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9+/]{43}=$', description: 'TEST ONLY: base64 Curve25519 public key trusted as the certificate root (the emulator\'s)' })),
  ALLOW_PRIVATE_URLS: Type.Boolean({ default: false, description: 'DEVELOPMENT AND TESTS ONLY: let url statuses fetch from loopback, private, link-local and unique-local addresses' }),
  STATUS_TTL_HOURS: Type.Number({ default: 24, exclusiveMinimum: 0, maximum: 8760, description: 'Status lifetime in hours' }),
  CLEANUP_INTERVAL_MS: Int(300_000, 100, 86_400_000, 'How often expired statuses and unused uploads are removed'),
  LINK_TIMEOUT_MS: Int(600_000, 1000, 86_400_000, 'Stop refreshing QR / pairing codes after this long without a link'),
  STATUS_CHUNK_SIZE: Int(256, 1, 5000, 'Recipients per status stanza for large lists'),
  SEND_RECONNECT_WAIT_MS: Int(60_000, 100, 3_600_000, 'How long a send interrupted by a dropped link (or by a restart) waits for its session to reconnect before it ends partial')
})

export type Env = Static<typeof EnvSchema>
