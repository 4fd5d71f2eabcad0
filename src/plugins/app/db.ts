import fp from 'fastify-plugin'
import { openDatabase, type DbHandle } from '../../db/connection.js'
import { secureDatabaseFiles } from '../../db/file-modes.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Kysely + the raw better-sqlite3 handle; closed when the app closes */
    db: DbHandle
  }
}

export default fp(async (app) => {
  for (const t of secureDatabaseFiles(app.config.databaseFile)) app.log.warn(t, `tightened the mode of ${t.path} from ${t.from} to ${t.to}: it holds account keys`)
  const handle = await openDatabase(app.config.databaseFile)
  // created by SQLite just now, with the database file's mode; checked again in case an old one lingered
  for (const t of secureDatabaseFiles(app.config.databaseFile)) app.log.warn(t, `tightened the mode of ${t.path} from ${t.from} to ${t.to}: it holds account keys`)
  app.decorate('db', handle)
  app.addHook('onClose', async () => { await handle.close() })
}, { name: 'db', dependencies: ['config'] })
