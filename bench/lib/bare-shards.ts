/**
 * Bare Baileys rc14 sockets spread over processes of at most `perProcess` sockets each (bench/scale-fleet.ts).
 * rc14 makes one AsyncLocalStorage per socket's key store, and on Node 20 every promise of a process visits
 * all of its storages (issue 33): in one stock process each 50 more sockets linked in 27, 48, 85 and 117 s
 * from 0, 50, 100 and 150 on (a quiet machine), near 250 its sockets missed their keep-alives. A user of stock Baileys at 1,000 accounts runs several
 * processes, so the control does too. Socket `i` lives in process ⌊i / perProcess⌋: up to `perProcess`
 * sockets the control is the single process it always was. Memory is each process's growth summed; CPU the
 * processes' sum. Several processes can use both cores where the service has one main thread, so the receipt
 * ratio against them errs in the control's favour.
 */
import { join } from 'node:path'
import { startBareFleet, type BareFleet } from './bare-client.js'
import type { EmulatorApi } from '../../test/support/clients.js'

export interface BareShards extends Omit<BareFleet, 'pid'> {
  /** every process of the control, the first one first */
  pids: number[]
}

interface Options { dir: string, wsUrl: string, rootPublicKey: string, emu: EmulatorApi }

/** Enough processes for `sockets`, each started now (their baselines are measured before any link). */
export async function startBareShards (opts: Options, sockets: number, perProcess: number): Promise<BareShards> {
  const count = Math.max(1, Math.ceil(sockets / perProcess))
  const shards = await Promise.all(Array.from({ length: count }, async (_, k) => await startBareFleet({ ...opts, dir: join(opts.dir, `process-${k}`) })))
  const shardOf = (id: string): BareFleet => shards[Math.min(count - 1, Math.floor(Number(id) / perProcess))]
  /** statuses sent per process: a burst's views split as the statuses did */
  const sent = new Map<BareFleet, number>()
  return {
    pids: shards.map((s) => s.pid),
    link: async (specs, concurrency) => {
      // one process after another: each links `concurrency` at a time, as the single process did
      for (const shard of shards) {
        const mine = specs.filter((s) => shardOf(s.id) === shard)
        if (mine.length > 0) await shard.link(mine, concurrency)
      }
    },
    sendStatus: async (id, text, to) => {
      const shard = shardOf(id)
      const messageId = await shard.sendStatus(id, text, to)
      sent.set(shard, (sent.get(shard) ?? 0) + 1)
      return messageId
    },
    openCount: () => shards.reduce((n, s) => n + s.openCount(), 0),
    reached: async (total, timeoutMs) => {
      const all = [...sent.values()].reduce((a, b) => a + b, 0)
      const at = await Promise.all([...sent].map(async ([shard, n]) => await shard.reached(Math.round(total * n / all), timeoutMs)))
      return Math.max(...at)
    },
    stop: async () => { await Promise.all(shards.map(async (s) => { await s.stop() })) }
  }
}
