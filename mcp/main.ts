import { readFileSync } from 'node:fs'
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import { createClient } from '../client/src/index.js'
import { createMcpServer } from './server.js'

// `npm run --silent mcp`: the MCP server on stdio (docs/mcp.md). stdout is the protocol's channel: every
// message of ours goes to stderr, and the key is never written anywhere.
//
//   STATUS_TRACKER_URL       where the service listens (default http://127.0.0.1:3000)
//   STATUS_TRACKER_API_KEY   the key the tools call it with: the admin key or a scoped key (stk_…); required
//   STATUS_TRACKER_LINK_WAIT_MS  how long link_session waits for the QR or pairing code (default 20000)

const baseUrl = (process.env.STATUS_TRACKER_URL ?? '').trim() || 'http://127.0.0.1:3000'
const apiKey = (process.env.STATUS_TRACKER_API_KEY ?? '').trim()
const linkWaitMs = Number(process.env.STATUS_TRACKER_LINK_WAIT_MS ?? 20_000)

if (apiKey === '') {
  console.error('status-tracker MCP: set STATUS_TRACKER_API_KEY to the admin key or a scoped key of the service (see docs/mcp.md)')
  process.exit(2)
}
if (!Number.isFinite(linkWaitMs) || linkWaitMs < 0) {
  console.error('status-tracker MCP: STATUS_TRACKER_LINK_WAIT_MS must be a number of milliseconds')
  process.exit(2)
}
try {
  new URL(baseUrl)
} catch {
  console.error(`status-tracker MCP: STATUS_TRACKER_URL is not a URL: ${baseUrl}`)
  process.exit(2)
}

const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
const st = createClient({ baseUrl: baseUrl.replace(/\/+$/, ''), apiKey })
const server = createMcpServer(st, baseUrl, { linkWaitMs }, version)
const transport = new StdioServerTransport()
// the client closing our stdin ends the server
process.stdin.once('end', () => { void server.close().finally(() => process.exit(0)) })
await server.connect(transport)
console.error(`status-tracker MCP ${version}: tools on stdio, calling ${baseUrl}`)
