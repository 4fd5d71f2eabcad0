import type { TestContext } from 'node:test'
import { startEmulator, testCertPaths, type Emulator } from '@status-tracker/emulator'
import { emulatorApi, linkSessions, serviceApi } from '../support/clients.js'
import { tempDir } from '../support/processes.js'
import { spawnService, type ServiceProc } from '../support/service.js'

export interface Killable {
  emu: Emulator
  /** the first service process, with the session linked */
  svc: ServiceProc
  /** starts the service again on the same data folder (after a SIGKILL); stopped after the test */
  start: () => Promise<ServiceProc>
  /** the first process's API */
  api: ReturnType<typeof serviceApi>
}

/**
 * The SIGKILL tests' set-up: the emulator in this process, the service as a real process on one temporary
 * folder that every restart reuses, and one session linked through the API by QR code.
 */
export async function killableService (
  t: TestContext, opts: { tempPrefix: string, sessionId: string, number: string, env?: Record<string, string> }
): Promise<Killable> {
  const emu = await startEmulator({ tls: testCertPaths() })
  t.after(async () => { await emu.stop() })
  const dir = tempDir(opts.tempPrefix)
  t.after(() => { dir.rm() })
  const start = async (): Promise<ServiceProc> => {
    return await spawnService({ dir: dir.path, emulator: emu, t, ...(opts.env !== undefined ? { env: opts.env } : {}) })
  }
  const svc = await start()
  const api = serviceApi(svc.base)
  await linkSessions(api, emulatorApi(emu.controlUrl), [{ sessionId: opts.sessionId, number: opts.number }])
  return { emu, svc, start, api }
}
