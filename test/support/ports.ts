import { createServer } from 'node:net'

// Shared by the tests and the benchmarks: no side effects on import.

/** A port on 127.0.0.1 that was free a moment ago. */
export async function freePort (): Promise<number> {
  return await new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      const port = typeof address === 'object' && address !== null ? address.port : 0
      server.close(() => { resolve(port) })
    })
  })
}
