// The panels that live in modules of their own (picker.js, mentions.js, audiences.js, schedules.js,
// contact-statuses.js, insights.js, webhooks.js, keys.js), made once with the page's services.
import { TYPE_LABELS, api, describe, toast, busy, confirmAction } from './page.js'
import { statusSummary } from './statuses.js'
import { createAudiencePicker } from './picker.js'
import { createMentionsField } from './mentions.js'
import { createSavedAudiencesPanel } from './audiences.js'
import { createSchedules } from './schedules.js'
import { createContactStatusesPanel } from './contact-statuses.js'
import { createInsightsPanel } from './insights.js'
import { createWebhooksPanel } from './webhooks.js'
import { createKeysPanel } from './keys.js'

export const picker = createAudiencePicker({ api, describe, loadSaved: () => { savedAudiences.ensure() } })
export const mentions = createMentionsField()
export const savedAudiences = createSavedAudiencesPanel({ api, describe, busy, confirmAction, toast, onChange: (list) => { picker.setSaved(list) } })
export const schedules = createSchedules({
  api,
  describe,
  busy,
  confirmAction,
  toast,
  summarize: (body) => `${TYPE_LABELS[body.type] ?? body.type}: ${statusSummary({ caption: '', ...body })}`,
  audienceText: (body) => picker.describe(body),
  audienceError: picker.errorEl
})
export const contactStatuses = createContactStatusesPanel({ api, describe, busy, confirmAction, toast })
export const insights = createInsightsPanel({ api, describe, busy, toast })
export const webhooks = createWebhooksPanel({ api, describe, busy, confirmAction, toast })
export const keys = createKeysPanel({ api, describe, busy, confirmAction, toast })
