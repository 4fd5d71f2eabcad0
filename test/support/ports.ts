import { readFileSync } from 'node:fs'
import { createServer } from 'node:net'

// Shared by the tests and the benchmarks: no side effects on import.

/**
 * The kernel's ephemeral range, where it picks the local port of every outgoing connection (Linux:
 * /proc/sys/net/ipv4/ip_local_port_range; elsewhere the IANA range).
 */
function ephemeralRange (): [number, number] {
  try {
    const [low, high] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number)
    if (Number.isInteger(low) && Number.isInteger(high)) return [low, high]
  } catch {
    // no /proc: not Linux
  }
  return [49152, 65535]
}

const FLOOR = 10_000

/** Tries to listen on `port` of 127.0.0.1, and closes at once; whether it could. */
async function canListen (port: number): Promise<boolean> {
  return await new Promise((resolve) => {
    const server = createServer()
    server.once('error', () => { resolve(false) })
    server.listen(port, '127.0.0.1', () => { server.close(() => { resolve(true) }) })
  })
}

/**
 * A port on 127.0.0.1 that was free a moment ago, chosen below the ephemeral range. A port the kernel gives for
 * `listen(0)` comes from that range, and so does the local port of every outgoing connection: with the suite's
 * thousands of loopback connections, one of them could take the port between this answer and the child's
 * listen (CI saw `EADDRINUSE` on a cluster node's planned port). Below the range only another listener can
 * take it, and the ports are picked at random, so two test processes rarely choose the same one.
 */
export async function freePort (): Promise<number> {
  const [low, high] = ephemeralRange()
  // a range that leaves little room below it: pick above it instead
  const [bottom, top] = low - FLOOR >= 1000 ? [FLOOR, low] : [high + 1, 65536]
  for (let i = 0; i < 50; i++) {
    const port = bottom + Math.floor(Math.random() * (top - bottom))
    if (await canListen(port)) return port
  }
  throw new Error(`no free port found in ${bottom}-${top - 1} after 50 tries`)
}
