import fp from 'fastify-plugin'
import multipart from '@fastify/multipart'

export default fp(async (app) => {
  await app.register(multipart, {
    limits: {
      fileSize: app.config.maxUploadBytes,
      files: 1,
      fields: 10,
      fieldSize: 64 * 1024,
      parts: 20
    }
  })
}, { name: 'multipart', dependencies: ['config'] })
