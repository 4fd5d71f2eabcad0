import fp from 'fastify-plugin'
import compress from '@fastify/compress'

/**
 * gzip / brotli answers for clients that ask (Accept-Encoding): the dashboard's files, the OpenAPI
 * document and UI, /metrics and the JSON API. Registered before the routes (it hooks each route as it is
 * added). Request bodies are never inflated: uploads and JSON arrive as sent, under the body limits.
 */
export default fp(async (app) => {
  await app.register(compress, { global: true, threshold: 1024, encodings: ['br', 'gzip', 'deflate'], globalDecompression: false })
}, { name: 'compress' })
