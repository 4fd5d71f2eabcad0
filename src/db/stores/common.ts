import type { Kysely } from 'kysely'
import type { Database } from '../database.js'
import { audienceStore } from './audiences.js'
import { contactStatusAnswerStore } from './contact-status-answers.js'
import { contactStatusStore } from './contact-statuses.js'
import { contactStore } from './contacts.js'
import { keysStore } from './keys.js'
import type { Stores } from './ports.js'
import { scheduleStore } from './schedules.js'

/** The stores whose every query both backends run the same, with nothing of the backend's own. */
export type CommonStores = Pick<Stores, 'audiences' | 'schedules' | 'contacts' | 'contactStatuses' | 'contactStatusAnswers' | 'keys'>

export function commonStores (db: Kysely<Database>): CommonStores {
  return {
    audiences: audienceStore(db),
    schedules: scheduleStore(db),
    contacts: contactStore(db),
    contactStatuses: contactStatusStore(db),
    contactStatusAnswers: contactStatusAnswerStore(db),
    keys: keysStore(db)
  }
}
