// Calibration for bench/reads.ts: the same health answer from a bare Fastify 5 app (no plugins, hooks,
// auth, rate limit or schema), so a miss can be told apart from what this machine can do at all.
import Fastify from 'fastify'

const app = Fastify({ logger: false })
app.get('/api/health', async () => ({ success: true, data: { status: 'healthy', timestamp: new Date().toISOString(), uptime: process.uptime(), version: '0.0.0' } }))
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' })
process.stdout.write('ready\n')
process.on('SIGTERM', () => { void app.close().then(() => process.exit(0)) })
