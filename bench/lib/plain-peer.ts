/**
 * The plain peer of bench/reads.ts (issue 25): the Express 5 + better-sqlite3 service a user would write
 * for the seed, as opposed to express-control.ts, which does the service's work per request. Seed-shaped
 * answers (the seed contract: docs/api.md, System and Sent statuses): health is `status`, `timestamp`, `uptime`, `version` and nothing checked;
 * the sent-statuses list has the seed's eight fields, from the simplest query (`select *` of the session's
 * statuses of the last 24 hours, newest first) on the service's own SQLite file (read-only). The key is
 * compared as such an app compares it (`x-api-key` or `Authorization: Bearer`, plain `===`). Express
 * defaults (res.json, its weak ETag); no cache. With the socket settings it keeps a linked Baileys socket
 * of its own, as the service keeps its session (control-socket.ts).
 *
 *   PORT, API_KEY, DB_FILE        where to listen, the key, the service's database (read-only)
 *   WA_WEBSOCKET_URL, WA_TEST_TRUST_ROOT, AUTH_DIR   optional: the Baileys socket
 */
import express from 'express'
import { SQLite } from '../../src/db/sqlite/driver.js'
import { serveControl } from './control-socket.js'

const { PORT, API_KEY, DB_FILE } = process.env
if (PORT === undefined || API_KEY === undefined || DB_FILE === undefined) throw new Error('PORT, API_KEY and DB_FILE are required')
const DAY_MS = 24 * 3_600_000

interface Row {
  id: number
  type: string
  content: string
  caption: string
  created_at: number
  message_id: string
  contact_count: number
  target_numbers: string
}
const db = new SQLite(DB_FILE, { readonly: true, fileMustExist: true })
const session = db.prepare<[string]>('select id from sessions where id = ?')
const statuses = db.prepare<[string, number], Row>('select * from statuses where session_id = ? and created_at >= ? order by created_at desc')

const app = express()
app.use((req, res, next) => {
  if (req.get('x-api-key') === API_KEY || req.get('authorization') === `Bearer ${API_KEY}`) { next(); return }
  res.status(401).json({ success: false, error: 'Unauthorized' })
})
app.get('/api/health', (_req, res) => {
  res.json({ success: true, data: { status: 'healthy', timestamp: new Date().toISOString(), uptime: process.uptime(), version: '2.0.0' } })
})
app.get('/api/sessions/:sessionId/sent-statuses', (req, res) => {
  if (session.get(req.params.sessionId) === undefined) { res.status(404).json({ success: false, error: 'Session not found' }); return }
  const data = statuses.all(req.params.sessionId, Date.now() - DAY_MS).map((r) => ({
    id: String(r.id),
    type: r.type,
    content: r.content,
    caption: r.caption,
    timestamp: new Date(r.created_at).toISOString(),
    platformMessageId: r.message_id,
    contactCount: r.contact_count,
    targetNumbers: r.target_numbers
  }))
  res.json({ success: true, data })
})

await serveControl(app, Number(PORT), () => { db.close() })
