import type { FastifyInstance } from 'fastify'
import type { DbHandle } from '../../src/db/connection.js'
import { DB_HANDLE } from '../../src/db/stores/index.js'

/**
 * The database connection of a built app, for a test that reads or arranges rows itself (Kysely in `.db`;
 * the raw driver by dialect). The service never sees it: it reaches data through `app.stores`.
 */
export function dbOf (app: FastifyInstance): DbHandle {
  const handle = (app as unknown as Record<symbol, DbHandle | undefined>)[DB_HANDLE]
  if (handle === undefined) throw new Error('this app has no database (the db plugin is not registered)')
  return handle
}
