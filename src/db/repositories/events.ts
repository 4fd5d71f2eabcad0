// Moved to the event store (src/db/stores/events.ts); these names stay for the stores that append to the
// log in their own transactions until they move too.
export { appendEvents, EVENT_LOG_LOCK, pgAppendEvents, recentlyViewed, sqliteEventLog, type EventFilter, type NewEvent, type SqliteEventLog } from '../stores/events.js'
