/**
 * Memory per idle linked session: settled RSS of the service process before and after linking N
 * sessions (QR, through the API and the emulator), divided by N. No GC hook in the service: RSS is
 * sampled several times after a pause and the median taken.
 */
import { runBench } from './lib/bench.js'
import { connectSocket, emulatorApi, linkSessions, serviceApi } from '../test/support/clients.js'
import { sleep } from '../test/support/wait.js'
import { settledRss } from './lib/procs.js'

const MB = 1024 * 1024

await runBench('memory', 240_000, async ({ smoke, log, emulator, service }) => {
  const n = smoke ? 2 : 50
  const pauseMs = smoke ? 300 : 3000
  const samples = smoke ? 2 : 5
  const svc = await service()
  const emu = emulatorApi((await emulator()).controlUrl)
  const api = serviceApi(svc.base)
  // a dashboard-like client stays connected, as in real use
  const socket = await connectSocket(svc.base)
  for (let i = 0; i < 20; i++) { await api.get('/health'); await api.get('/sessions'); await api.get('/stats') }

  await sleep(pauseMs)
  const before = await settledRss(svc.pid, samples, 500)
  log(`baseline RSS ${(before.median / MB).toFixed(1)} MB`)

  const t0 = performance.now()
  await linkSessions(api, emu, Array.from({ length: n }, (_, i) => ({ sessionId: `idle-${i}`, number: `1555200${String(i).padStart(4, '0')}` })))
  const linkMs = performance.now() - t0
  log(`${n} sessions linked in ${(linkMs / 1000).toFixed(1)} s`)

  await sleep(pauseMs * 2)
  const after = await settledRss(svc.pid, samples, 500)
  socket.close()
  const perSession = (after.median - before.median) / n / MB
  log(`settled RSS ${(after.median / MB).toFixed(1)} MB (samples ${after.samples.map((s) => (s / MB).toFixed(1)).join(', ')})`)
  return [
    {
      id: 'memory.per-session',
      name: `memory per idle linked session (N = ${n})`,
      value: perSession,
      unit: 'MB',
      target: { op: '<=', value: 10 },
      note: `service RSS ${(before.median / MB).toFixed(0)} → ${(after.median / MB).toFixed(0)} MB (median of ${samples} samples 0.5 s apart after a ${pauseMs * 2 / 1000} s pause)`
    },
    { id: 'memory.link-time', name: `linking ${n} sessions by QR (6 at a time)`, value: linkMs / 1000, unit: 's', note: 'context only' }
  ]
})
