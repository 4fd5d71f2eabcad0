/**
 * The server side of app-state sync ("syncd") for one account: the account's sync key, and per collection
 * the patches its phone wrote, as the server keeps them for the account's linked devices.
 *
 * What the platform does, from public evidence:
 * - Five collections: critical_block, critical_unblock_low, regular_high, regular_low, regular (Baileys rc14
 *   `Types/Chat.js` ALL_WA_PATCH_NAMES; oxidezap/whatsapp-rust `wacore/appstate/src/schemas.rs` `Collection`).
 * - A device asks with `<iq xmlns="w:sync:app:state" type="set"><sync><collection name version
 *   return_snapshot/></sync></iq>` and gets `<sync><collection name version [has_more_patches="true"]>
 *   <patches><patch>SyncdPatch</patch>…</patches></collection></sync>` (rc14 `Socket/chats.js` resyncAppState
 *   and `Utils/chat-utils.js` extractSyncdPatches; tulir/whatsmeow `appstate.go` fetchAppStatePatches and
 *   `appstate/decode.go` ParsePatchList). Patches after the device's version, oldest first; a long history
 *   in pages (`has_more_patches`), which both clients loop over.
 * - Each patch is encrypted and MACed with the account's app-state sync key (AES-CBC value, HMAC index and
 *   value MACs, LT-hash snapshot MAC, patch MAC). The emulator writes them with Baileys' own encoder
 *   (`encodeSyncdPatch`), one mutation per patch, so a client that verifies MACs (rc14 with
 *   `appStateMacVerification`, whatsmeow, WA Web) accepts them.
 * - The server tells linked devices a collection changed with `<notification type="server_sync"><collection
 *   name version/></notification>` (whatsmeow `notification.go` handleAppStateNotification reads every
 *   `<collection>`; rc14 `Socket/messages-recv.js` reads the first only, so the emulator sends one per
 *   collection).
 *
 * Not emulated: snapshots. A device syncing from version 0 asks for one (`return_snapshot="true"`) and the
 * server answers with an ExternalBlobReference the client downloads from the media CDN by `directPath`
 * (rc14 `downloadExternalBlob` builds `https://mmg.whatsapp.net<directPath>`, a host a loopback emulator
 * cannot be): the emulator answers with the collection's whole patch history inline instead, which every
 * client decodes from an empty state the same way.
 */
import { randomBytes, randomInt } from 'node:crypto'
import { encodeSyncdPatch, newLTHashState, proto, type BinaryNode, type LTHashState } from '@whiskeysockets/baileys'

export const COLLECTIONS = ['critical_block', 'critical_unblock_low', 'regular_high', 'regular_low', 'regular'] as const
export type CollectionName = typeof COLLECTIONS[number]

/**
 * patches per answer before `has_more_patches="true"`: the emulator's own page size (no public source gives the
 * server's; rc14 follows has_more_patches whatever it is)
 */
export const PATCHES_PER_ANSWER = 500

export interface Mutation {
  /** the mutation index, e.g. ['contact', '<number>@s.whatsapp.net'] */
  index: string[]
  /** the SyncActionValue (its `timestamp` included) */
  value: proto.ISyncActionValue
  /** the action's version (whatsapp-rust schemas.rs `version`: contact 2, status_privacy 7) */
  apiVersion: number
  operation: 'set' | 'remove'
}

interface Collection {
  state: LTHashState
  /** encoded SyncdPatch of version i + 1 at index i */
  patches: Buffer[]
}

/** The app-state sync key the phone shares with its linked devices (APP_STATE_SYNC_KEY_SHARE). */
export interface SyncKey {
  /** 6 bytes (whatsmeow logs them as 12 hex digits) */
  id: Buffer
  data: proto.Message.IAppStateSyncKeyData
}

export class AppStateServer {
  readonly key: SyncKey
  private readonly collections = new Map<CollectionName, Collection>()
  /** mutations are encoded one after the other (each patch starts from the state the previous one left) */
  private chain: Promise<unknown> = Promise.resolve()

  constructor () {
    const id = Buffer.concat([Buffer.alloc(2), randomBytes(4)])
    this.key = {
      id,
      data: {
        keyData: randomBytes(32),
        fingerprint: { rawId: randomInt(1, 2 ** 31), currentIndex: 0, deviceIndexes: [0] },
        timestamp: Date.now()
      }
    }
  }

  /** any collection holds a patch */
  get used (): boolean {
    return [...this.collections.values()].some((c) => c.patches.length > 0)
  }

  version (name: string): number {
    return this.collections.get(name as CollectionName)?.patches.length ?? 0
  }

  /** Records the mutations as patches of `name` (one each); resolves with the collection's new version. */
  async write (name: CollectionName, mutations: readonly Mutation[]): Promise<number> {
    const run = this.chain.then(async () => {
      let collection = this.collections.get(name)
      if (collection === undefined) {
        collection = { state: newLTHashState(), patches: [] }
        this.collections.set(name, collection)
      }
      const keyId = this.key.id.toString('base64')
      const getKey = async (id: string): Promise<proto.Message.IAppStateSyncKeyData | undefined> => id === keyId ? this.key.data : undefined
      for (const m of mutations) {
        const operation = m.operation === 'set' ? proto.SyncdMutation.SyncdOperation.SET : proto.SyncdMutation.SyncdOperation.REMOVE
        const { patch, state } = await encodeSyncdPatch(
          { type: name, index: m.index, syncAction: m.value, apiVersion: m.apiVersion, operation },
          keyId,
          collection.state,
          getKey as Parameters<typeof encodeSyncdPatch>[3]
        )
        collection.state = state
        // encodeSyncdPatch leaves the version out (a client sending a patch does); the server's patches carry it
        const withVersion = proto.SyncdPatch.create({ ...patch, version: { version: state.version } })
        collection.patches.push(Buffer.from(proto.SyncdPatch.encode(withVersion).finish()))
      }
      return collection.patches.length
    })
    this.chain = run.catch(() => undefined)
    return await run
  }

  /** Resolves once every write started so far is encoded. */
  async idle (): Promise<void> {
    await this.chain
  }

  /**
   * The `<collection>` answer for a device at `version`: the patches after it (at most PATCHES_PER_ANSWER,
   * then `has_more_patches`), and the collection's version. A device that is ahead (a collection the
   * emulator never wrote) gets no patch.
   */
  answer (name: string, version: number): BinaryNode {
    const patches = this.collections.get(name as CollectionName)?.patches ?? []
    const from = Number.isInteger(version) && version > 0 ? version : 0
    const page = patches.slice(from, from + PATCHES_PER_ANSWER)
    const more = from + page.length < patches.length
    return {
      tag: 'collection',
      attrs: { name, version: String(patches.length), ...(more ? { has_more_patches: 'true' } : {}) },
      content: page.length === 0 ? undefined : [{ tag: 'patches', attrs: {}, content: page.map((p) => ({ tag: 'patch', attrs: {}, content: p })) }]
    }
  }

  /** The protocol message the phone shares its key with: APP_STATE_SYNC_KEY_SHARE (rc14 `Utils/process-message.js`). */
  keyShareMessage (): proto.IMessage {
    return {
      protocolMessage: {
        type: proto.Message.ProtocolMessage.Type.APP_STATE_SYNC_KEY_SHARE,
        appStateSyncKeyShare: { keys: [{ keyId: { keyId: this.key.id }, keyData: this.key.data }] }
      }
    }
  }
}

/** `<notification type="server_sync">` for one collection at `version`. */
export function serverSyncNotification (name: CollectionName, version: number, id: string, t: string): BinaryNode {
  return {
    tag: 'notification',
    attrs: { from: 's.whatsapp.net', type: 'server_sync', id, t },
    content: [{ tag: 'collection', attrs: { name, version: String(version) } }]
  }
}
