import type { Webhook, WebhookDelivery } from '../../src/db/stores/webhooks.js'
import type { DeliveryView, WebhookView } from '../../schemas/webhook.js'

// Rows as the API shows them.

const iso = (ms: number | null): string | null => ms === null ? null : new Date(ms).toISOString()

export function toView (row: Webhook): WebhookView {
  return {
    id: row.id,
    url: row.url,
    events: row.events === null ? null : JSON.parse(row.events) as string[],
    sessionId: row.sessionId,
    description: row.description,
    enabled: row.enabled,
    disabledReason: row.disabledReason,
    createdAt: new Date(row.createdAt).toISOString(),
    updatedAt: new Date(row.updatedAt).toISOString()
  }
}

export function toDeliveryView (row: WebhookDelivery): DeliveryView {
  return {
    id: String(row.id),
    messageId: row.messageId,
    eventType: row.eventType,
    sessionId: row.sessionId,
    status: row.status,
    attempts: row.attempts,
    lastStatusCode: row.lastStatusCode,
    lastError: row.lastError,
    nextAttemptAt: row.status === 'pending' ? iso(row.nextAttemptAt) : null,
    lastAttemptAt: iso(row.lastAttemptAt),
    createdAt: new Date(row.createdAt).toISOString(),
    completedAt: iso(row.completedAt)
  }
}
