import fp from 'fastify-plugin'
import { DB_HANDLE, openStores, type Stores } from '../../src/db/stores/index.js'
import { secureDatabaseFiles } from '../../src/db/file-modes.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** one port per aggregate (src/db/stores); the only way services reach the database */
    stores: Stores
  }
}

export default fp(async (app) => {
  const { databaseFile, databaseUrl } = app.config
  const secure = (): void => {
    if (databaseUrl !== null) return
    for (const t of secureDatabaseFiles(databaseFile)) app.log.warn(t, `tightened the mode of ${t.path} from ${t.from} to ${t.to}: it holds account keys`)
  }
  secure()
  const opened = await openStores({ url: databaseUrl, file: databaseFile }, { plainStatements: app.config.speedTricksOff.has('kept-statements') })
  // created by SQLite just now, with the database file's mode; checked again in case an old one lingered
  secure()
  app.log.info(opened.describe(), 'database ready')
  app.decorate<Stores>('stores', opened.stores)
  // for tests that look at the rows themselves (test/support/db.ts); nothing in the service reads it
  app.decorate(DB_HANDLE, { getter: () => opened.handle })
  app.addHook('onClose', async () => { await opened.close() })
}, { name: 'db', dependencies: ['config'] })
