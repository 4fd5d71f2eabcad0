/**
 * A text status to many recipients: POST …/send-status with N new contacts (one device each) until
 * the 200. The emulator runs in its own process and decrypts every recipient's copy as it arrives
 * (sharing the machine's cores with the service). Afterwards the emulator must hold the status for
 * every recipient, decrypted. A second send to the same contacts shows the cost once their Signal
 * sessions exist.
 */
import { runBench } from './lib/bench.js'
import { emulatorApi, linkSessions, poll, serviceApi } from './lib/clients.js'
import { cpuSeconds } from './lib/procs.js'

interface Sent { statusId: string, platformMessageId: string, contactCount: number }

await runBench('send-many', 180_000, async ({ smoke, log, emulator, service }) => {
  const n = smoke ? 20 : 1000
  const svc = await service()
  const emuProc = await emulator()
  const emu = emulatorApi(emuProc.controlUrl)
  const api = serviceApi(svc.base)
  await linkSessions(api, emu, [{ sessionId: 'fanout', number: '15554000001' }])
  const contacts = (await emu.addContacts(n, '4472')).map((c) => c.number)

  const send = async (text: string): Promise<{ ms: number, sent: Sent, serviceCpu: number, emulatorCpu: number }> => {
    const cpu0 = [cpuSeconds(svc.pid), cpuSeconds(emuProc.pid)]
    const t0 = performance.now()
    const sent = await api.post<Sent>('/sessions/fanout/send-status', { type: 'text', content: text, backgroundColor: '#FF336699', targetNumbers: contacts.join(',') })
    const ms = performance.now() - t0
    const serviceCpu = cpuSeconds(svc.pid) - cpu0[0]
    const emulatorCpu = cpuSeconds(emuProc.pid) - cpu0[1]
    if (sent.contactCount !== n) throw new Error(`contactCount ${sent.contactCount}, expected ${n}`)
    // correctness, not timed: every recipient got it and could decrypt it
    await emu.settled(120_000)
    const record = await poll(async () => {
      const s = await emu.status(sent.platformMessageId)
      const got = new Set(s.recipients)
      return contacts.every((c) => got.has(c)) ? s : undefined
    }, 60_000, 'the emulator to record every recipient')
    const failed = record.errors.length
    if (!record.decrypted || failed > 0) throw new Error(`emulator: decrypted=${record.decrypted}, ${failed} errors, e.g. ${record.errors[0]}`)
    return { ms, sent, serviceCpu, emulatorCpu }
  }

  const first = await send('to many')
  const cpuNote = (r: typeof first): string => `CPU meanwhile: service ${r.serviceCpu.toFixed(1)} s, emulator ${r.emulatorCpu.toFixed(1)} s`
  log(`first send to ${n} new contacts: ${first.ms.toFixed(0)} ms (${cpuNote(first)})`)
  const again = await send('to many, again')
  log(`second send to the same ${n}: ${again.ms.toFixed(0)} ms`)
  return [
    {
      id: 'send-many.first',
      name: `text status to ${n.toLocaleString('en-US')} new contacts, POST → 200`,
      value: first.ms / 1000,
      unit: 's',
      target: { op: '<', value: 5 },
      note: `${cpuNote(first)}; every recipient decrypted it in the emulator (checked after the 200)`
    },
    {
      id: 'send-many.again',
      name: `same, to the same ${n.toLocaleString('en-US')} contacts again`,
      value: again.ms / 1000,
      unit: 's',
      note: `Signal sessions already exist; ${cpuNote(again)}`
    }
  ]
})
