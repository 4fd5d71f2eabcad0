import fp from 'fastify-plugin'
import { openDatabase, type DbHandle } from '../../db/connection.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Kysely + the raw better-sqlite3 handle; closed when the app closes */
    db: DbHandle
  }
}

export default fp(async (app) => {
  const handle = await openDatabase(app.config.databaseFile)
  app.decorate('db', handle)
  app.addHook('onClose', async () => { await handle.close() })
}, { name: 'db', dependencies: ['config'] })
