/**
 * The control of bench/reads.ts: the same two reads written the way a plain Express 5 + Baileys service
 * would, so "≥ 2 × Express" is measured in the same run instead of remembered. What it does per request
 * is what the service must do too: the API key from `x-api-key`, a health answer of the service's shape
 * (a `select 1` timed, the stored sessions counted by the state of its socket, the webhook outbox counted), and the sent-statuses
 * list queried from the service's own SQLite file (read-only) and mapped to the service's fields.
 * Express defaults are kept (JSON via res.json, its weak ETag), as in a typical implementation; no cache.
 *
 *   PORT, API_KEY, DB_FILE        where to listen, the key, the service's database (read-only)
 *   WA_WEBSOCKET_URL, WA_TEST_TRUST_ROOT, AUTH_DIR   optional: one Baileys socket on the emulator
 *                                 (control-socket.ts: prints `QR <code>` to be scanned, `OPEN` once linked)
 */
import express from 'express'
import { SQLite } from '../../src/db/sqlite/driver.js'
import { serveControl } from './control-socket.js'

const { PORT, API_KEY, DB_FILE } = process.env
if (PORT === undefined || API_KEY === undefined || DB_FILE === undefined) throw new Error('PORT, API_KEY and DB_FILE are required')
const TTL_MS = 24 * 3_600_000

const db = new SQLite(DB_FILE, { readonly: true, fileMustExist: true })
const ping = db.prepare('select 1')
const sessions = db.prepare<[], { id: string, linked: number }>('select id, linked from sessions order by created_at')
const pending = db.prepare("select count(*) from webhook_deliveries where status in ('pending', 'sending')").pluck()
const failing = db.prepare("select (select count(distinct webhook_id) from webhook_deliveries where status = 'pending' and attempts > 0) + " +
  '(select count(*) from webhooks where enabled = 0 and disabled_reason is not null)').pluck()
const sessionExists = db.prepare<[string]>('select 1 from sessions where id = ?').pluck()
interface Row {
  id: number
  type: string
  content: string
  caption: string
  message_id: string
  state: string
  created_at: number
  contact_count: number
  target_numbers: string
  sent_count: number
  error: string | null
  unreachable: string
  mentions: string
  audience: string | null
  viewer_count: number
  reaction_count: number
  reply_count: number
}
const listSent = db.prepare<[string, number], Row>(`select s.id, s.type, s.content, s.caption, s.message_id, s.state, s.created_at,
  s.contact_count, s.target_numbers, s.sent_count, s.error, s.unreachable, s.mentions, s.audience,
  (select count(*) from viewers v where v.status_id = s.id and v.is_real = 1) as viewer_count,
  (select count(*) from status_reactions r where r.status_id = s.id and r.emoji <> '') as reaction_count,
  (select count(*) from status_replies p where p.status_id = s.id) as reply_count
  from statuses s where s.session_id = ? and s.created_at >= ? order by s.created_at desc, s.id desc`)

const app = express()
app.use((req, res, next) => {
  if (req.get('x-api-key') !== API_KEY) { res.status(401).json({ success: false, error: 'Unauthorized' }); return }
  next()
})
app.get('/api/health', (_req, res) => {
  const started = performance.now()
  ping.get()
  const latencyMs = Math.round((performance.now() - started) * 1000) / 1000
  const rows = sessions.all()
  const socketState = socket.state()
  const open = socketState === 'open' ? 1 : 0
  res.json({
    success: true,
    data: {
      status: 'healthy',
      timestamp: new Date().toISOString(),
      uptime: process.uptime(),
      version: '2.0.0',
      checks: {
        database: { ok: true, latencyMs },
        sessions: { total: rows.length, connected: open, connecting: socketState === 'connecting' ? 1 : 0, disconnected: rows.length - open, loggedOut: 0, disconnectedTooLong: [] },
        // the service checks the Baileys internals it relies on once at start; the control relies on none
        platform: { loaded: true, baileys: '7.0.0-rc14', compatible: true, assumptions: 0, broken: [], clientExpiresAt: null, clientExpiresSoon: false },
        webhooks: { pending: pending.get(), failing: failing.get() }
      }
    }
  })
})
app.get('/api/sessions/:sessionId/sent-statuses', (req, res) => {
  const { sessionId } = req.params
  if (sessionExists.get(sessionId) === undefined) { res.status(404).json({ success: false, error: 'Session not found' }); return }
  const data = listSent.all(sessionId, Date.now() - TTL_MS).map((r) => ({
    id: String(r.id),
    type: r.type,
    content: r.content,
    caption: r.caption,
    timestamp: new Date(r.created_at).toISOString(),
    platformMessageId: r.message_id,
    contactCount: r.contact_count,
    targetNumbers: r.target_numbers,
    audience: r.audience === null ? null : JSON.parse(r.audience) as unknown,
    viewerCount: r.viewer_count,
    reactionCount: r.reaction_count,
    replyCount: r.reply_count,
    error: r.error,
    state: r.state,
    sentCount: r.sent_count,
    unreachable: r.unreachable === '' ? [] : r.unreachable.split(','),
    mentions: r.mentions === '' ? [] : r.mentions.split(',')
  }))
  res.json({ success: true, data })
})

const socket = await serveControl(app, Number(PORT), () => { db.close() })
