/** An in-memory Baileys auth state for tests (part of the `baileys-helpers` export, which re-exports it). */
import { BufferJSON, initAuthCreds, type AuthenticationState, type SignalDataSet, type SignalDataTypeMap, type SignalKeyStore } from '@whiskeysockets/baileys'

/** Auth state kept in memory, whose keys can be rolled back (`restorePoint`). */
export interface MemoryAuthState extends AuthenticationState {
  /**
   * Copies the key store as it is now; calling the returned function puts that copy back. A test uses it
   * to play a client killed before its key store committed what a send changed (its Signal sessions).
   */
  restorePoint: () => () => void
}

/** Auth state kept in memory; Baileys mutates `creds` in place on creds.update, so reuse the same object to log in again. */
export function makeMemoryAuthState (): MemoryAuthState {
  const creds = initAuthCreds()
  const data = new Map<string, unknown>()
  const keys: SignalKeyStore = {
    get<T extends keyof SignalDataTypeMap>(type: T, ids: string[]) {
      const out: { [id: string]: SignalDataTypeMap[T] } = {}
      for (const id of ids) {
        const value = data.get(`${type}/${id}`)
        if (value !== undefined) out[id] = value as SignalDataTypeMap[T]
      }
      return out
    },
    set (set: SignalDataSet) {
      for (const [type, entries] of Object.entries(set)) {
        for (const [id, value] of Object.entries(entries ?? {})) {
          if (value === null || value === undefined) data.delete(`${type}/${id}`)
          else data.set(`${type}/${id}`, value)
        }
      }
    },
    clear () {
      data.clear()
    }
  }
  const restorePoint = (): () => void => {
    // written as Baileys' own stores persist keys (BufferJSON): what a client restarted from disk reads back
    const copy = JSON.stringify([...data], BufferJSON.replacer)
    return () => {
      data.clear()
      for (const [key, value] of JSON.parse(copy, BufferJSON.reviver) as Array<[string, unknown]>) data.set(key, value)
    }
  }
  return { creds, keys, restorePoint }
}
