// The one Baileys adapter: every use of Baileys' (and ws', libsignal's) internals, behind named functions.
// assumptions.ts lists what they rely on; compat.ts checks it at start; UPGRADING.md says how to upgrade.

export { ASSUMPTIONS, type Assumption } from './assumptions.js'
export { checkCompatibility, describeBroken, loadedBaileys, type BrokenAssumption, type Compatibility, type Loaded } from './compat.js'
export { committingSignalRepository, lidReverseKey, LID_MAPPING_TYPE, storeLidMappings, type OnDecrypted } from './signal.js'
export { ackStanza, holdFrame, HELD_TAG, onFrame, onStanza, rawSocket, releaseFrame, releasePendingQueries, socketOpen, tcpSocket, type RawSocket } from './socket.js'
export { shareKeyTransactions, withSharedTransactions } from './key-transactions.js'
export { uncachedRecipients } from './devices.js'
export { setTrustRoot } from './trust-root.js'
