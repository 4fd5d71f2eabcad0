import type { Migration, MigrationProvider } from 'kysely'
import * as m001 from './001-initial.js'
import * as m002 from './002-viewer-lids.js'
import * as m003 from './003-send-progress.js'
import * as m004 from './004-webhooks.js'
import * as m005 from './005-reactions.js'
import * as m006 from './006-cluster.js'
import * as m007 from './007-delivery-claims.js'
import * as m008 from './008-event-log.js'
import * as m009 from './009-keys.js'
import * as m010 from './010-unreachable.js'
import * as m011 from './011-schedules.js'
import * as m012 from './012-cluster-secret.js'
import * as m013 from './013-phone-contacts.js'
import * as m014 from './014-audiences.js'
import * as m015 from './015-contact-statuses.js'
import * as m016 from './016-audio.js'
import * as m017 from './017-insights.js'
import * as m018 from './018-list-counts.js'
import * as m019 from './019-kept-counts.js'
import * as m020 from './020-status-mentions.js'
import * as m021 from './021-contact-status-answers.js'

// A static index instead of a file-system provider: src (tsx) and dist (tsc) resolve the same migrations.
const migrations: Record<string, Migration> = {
  '001-initial': m001,
  '002-viewer-lids': m002,
  '003-send-progress': m003,
  '004-webhooks': m004,
  '005-reactions': m005,
  '006-cluster': m006,
  '007-delivery-claims': m007,
  '008-event-log': m008,
  '009-keys': m009,
  '010-unreachable': m010,
  '011-schedules': m011,
  '012-cluster-secret': m012,
  '013-phone-contacts': m013,
  '014-audiences': m014,
  '015-contact-statuses': m015,
  '016-audio': m016,
  '017-insights': m017,
  '018-list-counts': m018,
  '019-kept-counts': m019,
  '020-status-mentions': m020,
  '021-contact-status-answers': m021
}

export const migrationProvider: MigrationProvider = {
  async getMigrations () { return migrations }
}
