import type { TObject } from '@sinclair/typebox'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import type { paths, StatusTracker } from '../client/src/index.js'
import {
  LinkSessionInput, ListSentStatusesInput, ListSessionsInput, PostStatusInput, ReadContactInsightsInput, ReadContactStatusesInput, ReadInsightsInput
} from './inputs.js'
import { linkSession, type LinkArgs } from './link.js'

// The tools: each one calls the service's REST API through the typed client (client/), with the key the
// server was started with, so the key's scopes and sessions apply as they do to any other caller.

export interface Tool {
  name: string
  title: string
  description: string
  /** the scopes a key needs (docs/keys.md), in words; shown in the description */
  scopes: string
  input: TObject
  readOnly: boolean
  run: (st: StatusTracker, args: Record<string, unknown>, options: ToolOptions) => Promise<CallToolResult>
}

export interface ToolOptions {
  /** link_session: how long to wait for the platform's QR or pairing code (ms) */
  linkWaitMs: number
}

/** a JSON answer as one text content item */
export const json = (value: unknown): CallToolResult => ({ content: [{ type: 'text', text: JSON.stringify(value, null, 2) }] })

type JsonBody<P extends keyof paths> = paths[P] extends { post: { requestBody?: { content: { 'application/json': infer B } } } } ? B : never

type Query<P extends keyof paths> = paths[P] extends { get: { parameters: { query?: infer Q } } } ? Q : never

const sessionOf = (args: Record<string, unknown>) => ({ path: { sessionId: args.sessionId as string } })

/** `args` without the session id: a query string's fields */
function queryOf<Q> (args: Record<string, unknown>): Q {
  const { sessionId: _, ...query } = args
  return query as Q
}

export const TOOLS: Tool[] = [
  {
    name: 'list_sessions',
    title: 'List sessions',
    description: 'Every WhatsApp session the key sees, with its connection state (connected, status, ownNumber) and its pairing code while linking. ' +
      'The QR code itself is left out here: link_session returns it as an image.',
    scopes: 'read',
    input: ListSessionsInput,
    readOnly: true,
    run: async (st) => {
      const sessions = await st.GET('/api/sessions')
      return json(sessions.map(({ qrCode, ...s }) => ({ ...s, qrCodeShown: qrCode !== null })))
    }
  },
  {
    name: 'link_session',
    title: 'Link a session',
    description: 'Link a WhatsApp account: creates the session if it does not exist (without phoneNumber: by QR code; with one: by pairing code), ' +
      'then returns the QR code as a PNG image to scan, or the 8-character pairing code to enter on the phone. ' +
      'A session already connected is reported as such.',
    scopes: 'manage (to create a session; read for one that exists)',
    input: LinkSessionInput,
    readOnly: false,
    run: async (st, args, options) => await linkSession(st, args as unknown as LinkArgs, { waitMs: options.linkWaitMs })
  },
  {
    name: 'post_status',
    title: 'Post a status',
    description: 'Publish a status (the fields of POST /api/sessions/{sessionId}/send-status): type text (content: the text), ' +
      'or url (content: a direct http(s) link to an image or video; caption optional), or image/video/audio with a filename returned by an upload. ' +
      'Recipients: targetNumbers (comma-separated numbers) or audience. With `at` (and optionally `repeat`) the status is scheduled instead ' +
      '(POST …/scheduled-statuses) and the answer is the schedule id and its next run.',
    scopes: 'send (now); manage (with at: a schedule)',
    input: PostStatusInput,
    readOnly: false,
    run: async (st, args) => {
      const { sessionId, at, repeat, ...status } = args
      const params = sessionOf({ sessionId })
      if (at === undefined) {
        if (repeat !== undefined) return { isError: true, content: [{ type: 'text', text: '`repeat` needs `at`: the time of the first run' }] }
        const body = status as unknown as JsonBody<'/api/sessions/{sessionId}/send-status'>
        return json(await st.POST('/api/sessions/{sessionId}/send-status', { params, body }))
      }
      const body = { status, at, ...(repeat !== undefined ? { repeat } : {}) } as unknown as JsonBody<'/api/sessions/{sessionId}/scheduled-statuses'>
      return json({ scheduled: true, ...await st.POST('/api/sessions/{sessionId}/scheduled-statuses', { params, body }) })
    }
  },
  {
    name: 'list_sent_statuses',
    title: 'List sent statuses with their viewers',
    description: 'The statuses the session posted that have not expired yet, newest first, each with its counts and its viewers (number, viewedAt). ' +
      'With statusId: that one status with its viewers, reactions and replies.',
    scopes: 'read',
    input: ListSentStatusesInput,
    readOnly: true,
    run: async (st, args) => {
      const sessionId = args.sessionId as string
      const one = (statusId: string) => ({ path: { sessionId, statusId } })
      const viewersOf = async (statusId: string) =>
        (await st.GET('/api/sessions/{sessionId}/status-viewers/{statusId}', { params: one(statusId) })).map(({ number, jid, viewedAt, isReal }) => ({
          number: number ?? jid, viewedAt, ...(isReal ? {} : { ownAccount: true })
        }))
      const statuses = await st.GET('/api/sessions/{sessionId}/sent-statuses', { params: sessionOf(args) })
      if (typeof args.statusId === 'string') {
        const statusId = args.statusId
        const [viewers, reactions, replies] = await Promise.all([
          viewersOf(statusId),
          st.GET('/api/sessions/{sessionId}/status-reactions/{statusId}', { params: one(statusId) }),
          st.GET('/api/sessions/{sessionId}/status-replies/{statusId}', { params: one(statusId) })
        ])
        return json({ status: statuses.find((s) => s.id === statusId) ?? null, viewers, reactions, replies })
      }
      const newest = statuses.slice(0, typeof args.limit === 'number' ? args.limit : 10)
      const withViewers = await Promise.all(newest.map(async (s) => ({ ...s, viewers: await viewersOf(s.id) })))
      return json({ total: statuses.length, statuses: withViewers })
    }
  },
  {
    name: 'read_insights',
    title: 'Read insights',
    description: 'Figures over the statuses posted in a time range, expired ones included (the query of GET /api/sessions/{sessionId}/insights): ' +
      'totals, view rate, time to view, views by hour and weekday, per day, by type, by audience and per status.',
    scopes: 'read',
    input: ReadInsightsInput,
    readOnly: true,
    run: async (st, args) => json(await st.GET('/api/sessions/{sessionId}/insights', { params: { ...sessionOf(args), query: queryOf<Query<'/api/sessions/{sessionId}/insights'>>(args) } }))
  },
  {
    name: 'read_contact_insights',
    title: 'Read insights per contact',
    description: 'Per contact over a time range: statuses received and viewed, view rate, median time to view, reactions, replies, last view; sorted and paged.',
    scopes: 'read',
    input: ReadContactInsightsInput,
    readOnly: true,
    run: async (st, args) => json(await st.GET('/api/sessions/{sessionId}/insights/contacts', { params: { ...sessionOf(args), query: queryOf<Query<'/api/sessions/{sessionId}/insights/contacts'>>(args) } }))
  },
  {
    name: 'read_contact_statuses',
    title: "Read contacts' statuses",
    description: "What the account's contacts posted in the last 24 hours, newest first (text, caption, media type and size), paged with limit and cursor.",
    scopes: 'read',
    input: ReadContactStatusesInput,
    readOnly: true,
    run: async (st, args) => json(await st.GET('/api/sessions/{sessionId}/contact-statuses', { params: { ...sessionOf(args), query: queryOf<Query<'/api/sessions/{sessionId}/contact-statuses'>>(args) } }))
  }
]
