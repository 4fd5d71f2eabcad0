// EmulatorServer, layer 6: accounts, contacts, connection records, faults and notices (notices.ts, refusals.ts).
import { randomBytes } from 'node:crypto'
import { publicAckStats } from './acks.js'
import { EmulatorError } from './errors.js'
import { RULE_ERROR } from './status-rules.js'
import { checkRefusal } from './refusals.js'
import { clientExpirationNode, refreshLidAckNode } from './notices.js'
import type { AccountInfo, AccountRef, ContactInfo, FaultKind, ConnectionLogEntry, StatusRefusalInfo, StatusRefusalOptions } from './types.js'
import type { ConnectionAckStats, ReplacedLogin } from './types-messages.js'
import { StatusServer } from './server-statuses.js'
import { legacyFlag, contactInfo } from './server-base.js'

const FAULT_KINDS: readonly FaultKind[] = ['drop', 'logout', 'restart-required', 'reject-next-status', 'rate-limited']

/** Accounts and contacts, the connection records, faults and what the server announces outside messages. */
export abstract class AccountServer extends StatusServer {
  createAccount (number: string, options: { legacy?: boolean } = {}): AccountRef {
    const account = this.directory.createAccount(number, legacyFlag(options?.legacy))
    return { number: account.number, lid: account.lid, legacy: account.legacy }
  }

  getAccount (number: string): AccountInfo {
    const account = this.directory.account(number)
    const live = this.liveConnections(account)
    return {
      number: account.number,
      lid: account.lid,
      legacy: account.legacy,
      connected: live.length > 0,
      linkedDevices: account.activeCompanions().map((d) => ({
        device: d.id,
        keyIndex: d.keyIndex,
        jid: `${account.number}:${d.id}@s.whatsapp.net`,
        lidJid: `${account.lid}:${d.id}@lid`,
        platform: d.platform,
        linkedAt: d.linkedAt.toISOString(),
        connected: live.some((c) => c.device === d),
        preKeysOnServer: d.preKeyCount
      }))
    }
  }

  addContact (spec: { number: string, devices?: number, legacy?: boolean }): ContactInfo {
    return contactInfo(this.directory.createContact(spec?.number, spec?.devices ?? 1, legacyFlag(spec?.legacy)))
  }

  addContacts (count: number, options: { devices?: number, prefix?: string, legacy?: boolean, publishKeys?: boolean } = {}): ContactInfo[] {
    return this.directory.createContacts(count, options.devices ?? 1, options.prefix, legacyFlag(options.legacy), options.publishKeys === true).map(contactInfo)
  }

  getContact (number: string): ContactInfo {
    return contactInfo(this.directory.contact(number))
  }

  addContactDevice (number: string): ContactInfo {
    const contact = this.directory.contact(number)
    contact.addDevice()
    return contactInfo(contact)
  }

  connectionLog (): ConnectionLogEntry[] {
    return this.connectionHistory.map((e) => ({ ...e }))
  }

  unackedCount (number: string): number {
    const account = this.directory.account(number)
    return account.activeCompanions().reduce((sum, d) => sum + d.acks.size + d.offlineQueue.length, 0)
  }

  ackStats (number: string): ConnectionAckStats[] {
    const account = this.directory.account(number)
    return [...account.companions.values()]
      .flatMap((d) => d.acks.connections())
      .sort((a, b) => a.connection - b.connection)
      .map(publicAckStats)
  }

  replacedLogins (number?: string): ReplacedLogin[] {
    const wanted = number === undefined ? undefined : this.directory.account(number).number
    return this.replaced.filter((r) => wanted === undefined || r.number === wanted).map((r) => ({ ...r }))
  }

  fault (number: string, kind: FaultKind): void {
    const account = this.directory.account(number)
    if (!FAULT_KINDS.includes(kind)) throw new EmulatorError(400, `kind must be one of ${FAULT_KINDS.join(', ')}`)
    const live = this.liveConnections(account)
    this.logger.info({ number: account.number, kind, connections: live.length }, 'fault')
    switch (kind) {
      case 'drop':
        for (const conn of live) conn.terminate()
        break
      case 'logout':
        // what the server sends when the phone removes the device: Baileys maps 401 to loggedOut
        for (const device of account.activeCompanions()) {
          device.removed = true
          device.removedAt = new Date()
          device.offlineQueue.length = 0
          device.acks.clear()
        }
        for (const conn of live) conn.streamError('401', { tag: 'conflict', attrs: { type: 'device_removed' } })
        break
      case 'restart-required':
        for (const conn of live) conn.streamError('515')
        break
      case 'reject-next-status':
        this.refuseStatuses(account.number, { error: RULE_ERROR, count: 1 })
        break
      case 'rate-limited':
        // the server asks the client to back off, then ends the stream (notices.ts)
        for (const conn of live) conn.streamError('429')
        break
    }
  }

  // ---------------------------------------------------------------- what the server announces (notices.ts)

  announceClientExpiration (number: string, options: { t: number }): { sent: number } {
    if (!Number.isSafeInteger(options?.t) || options.t <= 0) throw new EmulatorError(400, 't (unix seconds, a positive integer) is required')
    const live = this.liveConnections(this.directory.account(number))
    for (const conn of live) conn.send(clientExpirationNode(options.t))
    return { sent: live.length }
  }

  changeLid (contactNumber: string): ContactInfo {
    const contact = this.directory.changeLid(contactNumber)
    this.staleLids.mark(contact.number)
    return contactInfo(contact)
  }

  sendRefreshLidAck (number: string, options: { from: string, id?: string }): { sent: number } {
    if (typeof options?.from !== 'string' || options.from === '') throw new EmulatorError(400, 'from (the peer JID) is required')
    const live = this.liveConnections(this.directory.account(number))
    const id = options.id ?? randomBytes(8).toString('hex').toUpperCase()
    for (const conn of live) conn.send(refreshLidAckNode(id, options.from))
    return { sent: live.length }
  }

  refuseStatuses (number: string, options: StatusRefusalOptions): StatusRefusalInfo {
    const account = this.directory.account(number)
    const refusal = checkRefusal(options)
    account.statusRefusal = refusal.left > 0 ? refusal : null
    this.logger.info({ number: account.number, ...refusal }, 'status stanzas to be refused')
    return { number: account.number, ...refusal }
  }
}
