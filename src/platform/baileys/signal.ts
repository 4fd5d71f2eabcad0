import { DEFAULT_CONNECTION_CONFIG, type SocketConfig, type WASocket } from '@whiskeysockets/baileys'
import { pnJid } from '../../jid.js'

// Baileys' Signal repository and its LID store, as the service uses them (assumptions.ts names each).

/** Called with what was decrypted, inside the key store's transaction for its sender. */
export type OnDecrypted = (ciphertext: Uint8Array, plaintext: Uint8Array) => Promise<void>

/**
 * Baileys' own signal repository with decryptMessage running `onDecrypted` before it returns, inside the
 * key store's transaction for that sender (addTransactionCapability: nested transactions join the outer
 * one, mutations are written when the outermost ends). rc14's decrypt() awaits decryptMessage before the
 * message's receipt can go out, so what `onDecrypted` commits is committed before the ack, and the Signal
 * session advances only after it (a throw abandons the transaction). Assumptions `signal-repository`,
 * `decrypt-in-key-transaction`.
 */
export function committingSignalRepository (onDecrypted: OnDecrypted): SocketConfig['makeSignalRepository'] {
  return (auth, logger, pnToLid) => {
    const repository = DEFAULT_CONNECTION_CONFIG.makeSignalRepository(auth, logger, pnToLid)
    const decrypt = repository.decryptMessage.bind(repository)
    const { keys } = auth
    if (!('transaction' in keys)) throw new Error('Baileys assumption "decrypt-in-key-transaction" broke: the signal key store has no transactions')
    repository.decryptMessage = async (opts) => await keys.transaction(async () => {
      const plaintext = await decrypt(opts)
      await onDecrypted(opts.ciphertext, plaintext)
      return plaintext
    }, opts.jid)
    return repository
  }
}

/** The 'lid-mapping' key holding a LID user's phone-number user. Assumption `lid-mapping-keys`. */
export const LID_MAPPING_TYPE = 'lid-mapping'
export const lidReverseKey = (lidUser: string): string => `${lidUser}_reverse`

/**
 * Stores LID → number pairs in Baileys' LID store (`signalRepository.lidMapping`, its 'lid-mapping'
 * keys), as Baileys does itself for a `lid-mapping.update` (lib/Socket/chats.js): sends and later runs
 * know them. Assumption `signal-repository`.
 */
export async function storeLidMappings (sock: WASocket, pairs: Array<{ lid: string, number: string }>): Promise<void> {
  await sock.signalRepository.lidMapping.storeLIDPNMappings(pairs.map(({ lid, number }) => ({ lid, pn: pnJid(number) })))
}
