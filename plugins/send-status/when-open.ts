import type { SendStatusDeps } from './deps.js'

export interface WaitContext {
  platform: Pick<SendStatusDeps['platform'], 'snapshot' | 'on' | 'off'>
  /** the waits under way, told to look again when the service stops */
  waiting: Set<() => void>
  closing: () => boolean
}

const duration = (ms: number): string => ms < 1000 ? `${ms} ms` : `${Math.round(ms / 1000)} s`

/** Waits (at most `timeoutMs`) for a session to be open; answers its own number, or why it is not coming back. */
export async function whenOpen (ctx: WaitContext, sessionId: string, timeoutMs: number): Promise<{ own: string } | { why: string }> {
  const { platform, waiting } = ctx
  return await new Promise((resolve) => {
    const finish = (value: { own: string } | { why: string }): void => {
      clearTimeout(timer)
      waiting.delete(check)
      platform.off('connection-status', onStatus)
      resolve(value)
    }
    const check = (): void => {
      if (ctx.closing()) { finish({ why: 'the service stopped before the session reconnected' }); return }
      const snap = platform.snapshot(sessionId)
      if (snap?.connected === true && snap.ownNumber !== null) finish({ own: snap.ownNumber })
      else if (snap?.status === 'logged-out') finish({ why: 'the session is logged out' })
    }
    const onStatus = ({ sessionId: sid }: { sessionId: string }): void => { if (sid === sessionId) check() }
    const timer = setTimeout(() => { finish({ why: `the session did not reconnect within ${duration(timeoutMs)}` }) }, timeoutMs)
    waiting.add(check)
    platform.on('connection-status', onStatus)
    check()
  })
}
