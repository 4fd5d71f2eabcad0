import fp from 'fastify-plugin'
import compress from '@fastify/compress'

/**
 * Answers already in memory up to this size are compressed in one call on the event loop, not through a
 * zlib stream (the library's default on two cores: 8 KiB). A stream hands each chunk to libuv's threadpool
 * and back, a turn of the event loop each, and while the loop is busy (a start of 1,000 sessions) every turn
 * waits behind the sessions' work: GET /api/stats (1,000 sessions, ~140 KB) took 45–52 ms at the median
 * gzipped that way, 23–30 ms compressed in one call (p99 118–193 against 71–128 ms; bench/NOTES.md, "The
 * stats answer during a start"). One call costs ~1–2 ms of the loop for such an answer; larger ones, files
 * and streams still go through the stream.
 */
export const SYNC_THRESHOLD = 256 * 1024

/**
 * gzip / brotli answers for clients that ask (Accept-Encoding): the dashboard's files, the OpenAPI
 * document and UI, /metrics and the JSON API. Registered before the routes (it hooks each route as it is
 * added). Request bodies are never inflated: uploads and JSON arrive as sent, under the body limits.
 */
export default fp(async (app) => {
  await app.register(compress, { global: true, threshold: 1024, syncThreshold: SYNC_THRESHOLD, encodings: ['br', 'gzip', 'deflate'], globalDecompression: false })
}, { name: 'compress' })
