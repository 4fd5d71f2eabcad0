import fp from 'fastify-plugin'
import mediaStore from './media-store.js'
import remoteMedia from './remote-media.js'
import routes from './routes.js'

/** The uploads concern: the media store (local or S3), media fetched from a URL, and POST /api/upload-media. */
export default fp(async (app) => {
  await app.register(mediaStore)
  await app.register(remoteMedia)
  await app.register(routes, { prefix: '/api' })
}, { name: 'uploads', dependencies: ['config', 'db', 'auth'] })
