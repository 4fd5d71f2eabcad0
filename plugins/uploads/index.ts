import fp from 'fastify-plugin'
import routes from './routes.js'

/**
 * The uploads concern: POST /api/upload-media. Its plugins (registered by src/app.ts, like every plugin): the
 * media store, local or S3 (media-store.ts), and media fetched from a URL (remote-media.ts).
 */
export default fp(async (app) => {
  await app.register(routes, { prefix: '/api' })
}, { name: 'uploads', dependencies: ['config', 'db', 'auth', 'media-store'] })
