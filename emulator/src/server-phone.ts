// EmulatorServer, layer 3: the phone's app state (phone.ts, app-state.ts).
import { randomBytes } from 'node:crypto'
import { encodeWAMessage, getBinaryNodeChildren, type BinaryNode } from '@whiskeysockets/baileys'
import { type Account, CompanionDevice, signalNameOf } from './accounts.js'
import { serverSyncNotification, type CollectionName, type Mutation } from './app-state.js'
import { WaConnection } from './connection.js'
import {
  checkSavedContacts,
  checkStatusPrivacy,
  CONTACTS_COLLECTION,
  Phone,
  phoneMessageId,
  PRIVACY_COLLECTION,
  replaceSavedContacts,
  replaceStatusPrivacy,
  savedContactsOf,
  statusPrivacyAnswer
} from './phone.js'
import { signalSenderFor } from './signal-party.js'
import type {
  PhoneSyncResult,
  SavedContactInfo,
  SavedContactsResult,
  StatusPrivacyInfo,
  StatusPrivacyMode,
  StatusPrivacyResult
} from './types.js'
import { LinkingServer } from './server-linking.js'
import { unixNow } from './server-base.js'

/** The phone's app state: saved contacts and status privacy, written as mutations and told to the linked devices. */
export abstract class PhoneServer extends LinkingServer {
  protected phoneOf (account: Account): Phone {
    let phone = this.phones.get(account)
    if (phone === undefined) {
      phone = new Phone()
      this.phones.set(account, phone)
    }
    return phone
  }

  async setSavedContacts (number: string, contacts: Array<{ number: string, name: string }>): Promise<SavedContactsResult> {
    const account = this.directory.account(number)
    const list = checkSavedContacts({ contacts })
    const phone = this.phoneOf(account)
    const mutations = replaceSavedContacts(this.directory, phone, list, account.legacy)
    const result = await this.writeAndTell(account, phone, CONTACTS_COLLECTION, mutations)
    this.logger.info({ number: account.number, contacts: list.length, ...result }, 'saved contacts set')
    return { contacts: savedContactsOf(this.directory, phone), ...result }
  }

  savedContacts (number: string): SavedContactInfo[] {
    const account = this.directory.account(number)
    const phone = this.phones.get(account)
    return phone === undefined ? [] : savedContactsOf(this.directory, phone)
  }

  async setStatusPrivacy (number: string, privacy: { mode: StatusPrivacyMode, numbers?: string[] }): Promise<StatusPrivacyResult> {
    const account = this.directory.account(number)
    const checked = checkStatusPrivacy(privacy)
    const phone = this.phoneOf(account)
    const mutation = replaceStatusPrivacy(this.directory, phone, checked, account.legacy)
    const result = await this.writeAndTell(account, phone, PRIVACY_COLLECTION, [mutation])
    this.logger.info({ number: account.number, mode: checked.mode, numbers: checked.numbers.length, ...result }, 'status privacy set')
    return { ...phone.privacy, ...result }
  }

  statusPrivacy (number: string): StatusPrivacyInfo {
    const account = this.directory.account(number)
    const privacy = this.phones.get(account)?.privacy ?? { mode: 'contacts', numbers: [] }
    return { mode: privacy.mode, numbers: [...privacy.numbers] }
  }

  /** Writes the mutations to the collection and tells every linked device (`server_sync`; the key first where lacking). */
  protected async writeAndTell (account: Account, phone: Phone, collection: CollectionName, mutations: Mutation[]): Promise<PhoneSyncResult> {
    if (mutations.length === 0) return { version: phone.appState.version(collection), changes: 0, deliveredTo: 0, queuedFor: 0 }
    const version = await phone.appState.write(collection, mutations)
    let deliveredTo = 0
    let queuedFor = 0
    for (const device of account.activeCompanions()) {
      const nodes: BinaryNode[] = []
      if (!phone.keyShared.has(device.id)) {
        phone.keyShared.add(device.id)
        nodes.push(await this.keyShareNode(account, phone, device))
      }
      nodes.push(serverSyncNotification(collection, version, randomBytes(8).toString('hex').toUpperCase(), unixNow()))
      if (this.deliverToDevice(account, device, nodes)) deliveredTo++
      else queuedFor++
    }
    return { version, changes: mutations.length, deliveredTo, queuedFor }
  }

  /**
   * The phone shares its app-state key with a linked device that lacks it, once the phone has app state (saved
   * contacts or a status privacy set through the control API): WA Web's primary shares it right after pairing
   * (oxidezap/whatsapp-rust `src/client/node_io.rs`: "the auto-shared key that the primary sends at pairing").
   * An account whose phone never got any stays as before (no key share, nothing more to ack).
   */
  protected shareAppStateKey (account: Account, device: CompanionDevice): void {
    const phone = this.phones.get(account)
    if (phone === undefined || !phone.appState.used || phone.keyShared.has(device.id)) return
    phone.keyShared.add(device.id)
    const work = this.keyShareNode(account, phone, device)
      .then((node) => { this.deliverToDevice(account, device, [node]) })
      .catch((error: unknown) => { this.logger.error({ err: error, number: account.number, device: device.id }, 'app-state key share failed') })
      .finally(() => { this.phoneWork.delete(work) })
    this.phoneWork.add(work)
  }

  /**
   * APP_STATE_SYNC_KEY_SHARE from the phone (device 0) to one linked device: a peer message (`category="peer"`,
   * type text: oxidezap/whatsapp-rust `wacore/src/send/peer.rs`) from the own LID (the own number for a legacy
   * account), so rc14 takes it as `fromMe` and stores the key (`Utils/process-message.js`). A new Signal session
   * from the device's bundle each time (a `pkmsg`): the device finds it whichever address it decrypts under.
   */
  protected async keyShareNode (account: Account, phone: Phone, device: CompanionDevice): Promise<BinaryNode> {
    const name = signalNameOf(account)
    const sender = signalSenderFor(name.user, name.server, device.id)
    const enc = await account.primary.encryptFresh(sender, () => device.takeBundle(), encodeWAMessage(phone.appState.keyShareMessage()))
    return {
      tag: 'message',
      attrs: { id: phoneMessageId(), from: `${name.user}@${name.server}`, type: 'text', category: 'peer', t: unixNow() },
      content: [{ tag: 'enc', attrs: { v: '2', type: enc.type }, content: enc.body }]
    }
  }

  /** `w:sync:app:state`: the patches each `<collection>` asks for, once the writes under way are encoded. */
  async appStateAnswer (conn: WaConnection, iq: BinaryNode): Promise<BinaryNode[]> {
    const phone = this.phoneOf(conn.account!)
    await phone.appState.idle()
    const sync = getBinaryNodeChildren(iq, 'sync')[0]
    const collections = getBinaryNodeChildren(sync, 'collection').map((c) => phone.appState.answer(c.attrs.name ?? '', Number(c.attrs.version ?? 0)))
    return [{ tag: 'sync', attrs: {}, content: collections }]
  }

  /** `<iq xmlns="status" type="get"><privacy/></iq>` */
  statusPrivacyAnswer (conn: WaConnection): BinaryNode[] {
    return [statusPrivacyAnswer(this.phoneOf(conn.account!))]
  }
}
