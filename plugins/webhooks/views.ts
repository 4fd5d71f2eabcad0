import type { WebhookDeliveryRecord, WebhookRecord } from '../../src/db/stores/webhooks.js'
import type { DeliveryView, WebhookView } from '../../schemas/webhook.js'

// Rows as the API shows them.

const iso = (ms: number | null): string | null => ms === null ? null : new Date(ms).toISOString()

export function toView (row: WebhookRecord): WebhookView {
  return {
    id: row.id,
    url: row.url,
    events: row.events === null ? null : JSON.parse(row.events) as string[],
    sessionId: row.session_id,
    description: row.description,
    enabled: row.enabled === 1,
    disabledReason: row.disabled_reason,
    createdAt: new Date(row.created_at).toISOString(),
    updatedAt: new Date(row.updated_at).toISOString()
  }
}

export function toDeliveryView (row: WebhookDeliveryRecord): DeliveryView {
  return {
    id: String(row.id),
    messageId: row.message_id,
    eventType: row.event_type,
    sessionId: row.session_id,
    status: row.status,
    attempts: row.attempts,
    lastStatusCode: row.last_status_code,
    lastError: row.last_error,
    nextAttemptAt: row.status === 'pending' ? iso(row.next_attempt_at) : null,
    lastAttemptAt: iso(row.last_attempt_at),
    createdAt: new Date(row.created_at).toISOString(),
    completedAt: iso(row.completed_at)
  }
}
