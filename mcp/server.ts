import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv'
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError, type CallToolResult, type Tool as McpTool } from '@modelcontextprotocol/sdk/types.js'
import { StatusTrackerError, type StatusTracker } from '../client/src/index.js'
import { jsonSchemaOf } from './inputs.js'
import { TOOLS, type ToolOptions } from './tools.js'

// The MCP server: the low-level `Server` of @modelcontextprotocol/sdk rather than `McpServer`, because
// McpServer takes tool inputs as zod schemas, and ours are the TypeBox (JSON Schema) schemas of the REST
// routes (mcp/inputs.ts). tools/list sends them as they are; tools/call checks the arguments against the
// same JSON Schema (the SDK's own Ajv validator) before anything is sent, and the service checks them again.

/** what a failed call becomes: an MCP tool error (isError) carrying the service's message */
function toolError (err: unknown, baseUrl: string): CallToolResult {
  const text = err instanceof StatusTrackerError
    ? `${err.message} (HTTP ${err.status})`
    : `The service at ${baseUrl} could not be reached: ${err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : String(err)}`
  return { isError: true, content: [{ type: 'text', text }] }
}

export function createMcpServer (st: StatusTracker, baseUrl: string, options: ToolOptions, version: string): Server {
  const server = new Server(
    { name: 'status-tracker', title: 'Status Tracker', version },
    {
      capabilities: { tools: {} },
      instructions: 'Publishes WhatsApp statuses and reads who viewed them, through a Status Tracker service. ' +
        'Start with list_sessions; link_session links an account (a QR code image or a pairing code); post_status needs a connected session.'
    }
  )
  const validator = new AjvJsonSchemaValidator()
  const tools = new Map(TOOLS.map((tool) => {
    const inputSchema = jsonSchemaOf(tool.input)
    return [tool.name, { tool, inputSchema, check: validator.getValidator<Record<string, unknown>>(inputSchema) }]
  }))

  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: [...tools.values()].map(({ tool, inputSchema }): McpTool => ({
      name: tool.name,
      title: tool.title,
      description: `${tool.description} Scope: ${tool.scopes}.`,
      inputSchema,
      annotations: { title: tool.title, readOnlyHint: tool.readOnly, destructiveHint: false, openWorldHint: true }
    }))
  }))

  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const entry = tools.get(request.params.name)
    if (entry === undefined) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`)
    const checked = entry.check(request.params.arguments ?? {})
    if (!checked.valid) return { isError: true, content: [{ type: 'text', text: `Invalid arguments for ${entry.tool.name}: ${checked.errorMessage}` }] }
    try {
      return await entry.tool.run(st, checked.data, options)
    } catch (err) {
      return toolError(err, baseUrl)
    }
  })
  return server
}
