// The bare-Fastify control of bench/reads.ts (issue 25: the service's health ÷ this ≥ 0.6): a Fastify 5 app
// with nothing registered (no logger, plugins, schema, rate limit or database) answering the service's own
// health JSON (HEALTH_JSON: one answer of the service, taken by the driver; timestamp and uptime filled per
// request) behind the service's key check (SHA-256 of the candidate against the key's, constant-time), so
// the ratio is the price of the service's contract over what the framework costs.
import { hash, timingSafeEqual } from 'node:crypto'
import Fastify from 'fastify'

const { PORT, API_KEY, HEALTH_JSON } = process.env
if (PORT === undefined || API_KEY === undefined || HEALTH_JSON === undefined) throw new Error('PORT, API_KEY and HEALTH_JSON are required')
const answer = JSON.parse(HEALTH_JSON) as { success: true, data: Record<string, unknown> }
const keyDigest = hash('sha256', API_KEY, 'buffer')

const app = Fastify({ logger: false })
app.addHook('onRequest', (req, reply, done) => {
  const key = req.headers['x-api-key']
  if (typeof key === 'string' && timingSafeEqual(hash('sha256', key, 'buffer'), keyDigest)) { done(); return }
  void reply.code(401).send({ success: false, error: 'Unauthorized' })
})
app.get('/api/health', async () => ({ success: true, data: { ...answer.data, timestamp: new Date().toISOString(), uptime: process.uptime() } }))
await app.listen({ port: Number(PORT), host: '127.0.0.1' })
process.stdout.write('ready\n')
process.on('SIGTERM', () => { void app.close().then(() => process.exit(0)) })
