import fp from 'fastify-plugin'
import { openStore, type DbHandle } from '../../src/db/connection.js'
import { secureDatabaseFiles } from '../../src/db/file-modes.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Kysely + the raw connection (better-sqlite3, or the `pg` pool with DATABASE_URL); closed when the app closes */
    db: DbHandle
  }
}

export default fp(async (app) => {
  const { databaseFile, databaseUrl } = app.config
  const secure = (): void => {
    if (databaseUrl !== null) return
    for (const t of secureDatabaseFiles(databaseFile)) app.log.warn(t, `tightened the mode of ${t.path} from ${t.from} to ${t.to}: it holds account keys`)
  }
  secure()
  const handle = await openStore({ url: databaseUrl, file: databaseFile })
  // created by SQLite just now, with the database file's mode; checked again in case an old one lingered
  secure()
  app.log.info({ database: handle.dialect === 'postgres' ? 'postgres' : handle.file }, 'database ready')
  app.decorate<DbHandle>('db', handle)
  app.addHook('onClose', async () => { await handle.close() })
}, { name: 'db', dependencies: ['config'] })
