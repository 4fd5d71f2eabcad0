/**
 * Start with many sessions: link N sessions once, stop the service (SIGTERM, clean close), then time
 * a fresh `node dist/src/server.js` (what `npm start` runs, at the default log level) on the same data
 * folder from spawn until /api/health answers (issue 14: < 1 s) and until GET /api/stats reports all N
 * connected (< 5 s). The emulator keeps running, so the devices stay linked.
 */
import { runBench } from './lib/bench.js'
import { connectedCount, emulatorApi, linkSessions, serviceApi } from '../test/support/clients.js'
import { waitFor } from '../test/support/wait.js'
import { cpuSeconds } from './lib/procs.js'

await runBench('startup', 240_000, async ({ smoke, log, emulator, service }) => {
  const n = smoke ? 3 : 100
  const first = await service({ name: 'service-link', profile: false })
  const emu = emulatorApi((await emulator()).controlUrl)
  const t0 = performance.now()
  await linkSessions(serviceApi(first.base), emu, Array.from({ length: n }, (_, i) => ({ sessionId: `boot-${i}`, number: `1555600${String(i).padStart(4, '0')}` })))
  log(`${n} sessions linked in ${((performance.now() - t0) / 1000).toFixed(1)} s`)
  const code = await first.stop(15_000)
  if (code !== 0) throw new Error(`the first service exited with ${code}`)

  const svc = await service({ name: 'service-start', env: { LOG_LEVEL: 'info' } })
  const api = serviceApi(svc.base)
  const open = await waitFor(async () => await connectedCount(api) === n ? performance.now() : undefined, 60_000, `${n} sessions to open`, 50)
  const totalS = (open - svc.spawnedAt) / 1000
  const cpu = cpuSeconds(svc.pid)
  const readyS = svc.readyMs / 1000
  log(`spawn → HTTP ready ${readyS.toFixed(2)} s, → all ${n} open ${totalS.toFixed(2)} s; service CPU ${cpu.toFixed(1)} s`)
  return [
    {
      id: 'startup.http-ready',
      name: `start with ${n} stored linked sessions, spawn → /api/health answers`,
      value: readyS,
      unit: 's',
      target: { op: '<', value: 1 },
      note: 'polled every 20 ms from spawn; the platform (Baileys) loads and the sessions reconnect after the server listens'
    },
    {
      id: 'startup.all-open',
      name: `start with ${n} stored linked sessions, spawn → all open`,
      value: totalS,
      unit: 's',
      target: { op: '<', value: 5 },
      note: `${(totalS - readyS).toFixed(2)} s after HTTP answered, GET /api/stats showed ${n} connected; service CPU ${cpu.toFixed(1)} s`
    }
  ]
})
