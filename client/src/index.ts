import createFetchClient, { defaultBodySerializer, type Client, type ClientOptions, type FetchResponse, type MaybeOptionalInit } from 'openapi-fetch'
import type { HttpMethod, MediaType, PathsWithMethod, RequiredKeysOf } from 'openapi-typescript-helpers'
import type { components, operations, paths } from './generated/openapi.js'

// A thin layer over openapi-fetch: the service's paths and bodies typed from its own OpenAPI document
// (src/generated/openapi.ts), the key sent on every request, and the envelope `{ success, data | error }`
// unwrapped: a call resolves to `data`, or rejects with a StatusTrackerError carrying the status code and
// the service's message.

export type { components, operations, paths }

/** An answer other than 2xx: the HTTP status and the service's `error` message (or the status text). */
export class StatusTrackerError extends Error {
  override readonly name = 'StatusTrackerError'

  constructor (
    /** the HTTP status code (400 bad input, 401 wrong key, 404 not found, 409 conflict, 429 pacing, …) */
    readonly status: number,
    message: string,
    /** the parsed body (the envelope `{ success: false, error }`, or text when the answer was not JSON) */
    readonly body: unknown,
    /** the answer's headers (Retry-After on 429, x-request-id) */
    readonly headers: Headers
  ) {
    super(message)
  }
}

export interface StatusTrackerOptions extends Omit<ClientOptions, 'baseUrl' | 'headers'> {
  /** where the service listens, e.g. `http://localhost:3000` */
  baseUrl: string
  /** the admin key (API_KEY) or a scoped key (`stk_…`) */
  apiKey: string
  /** how the key travels: the `x-api-key` header (default) or `Authorization: Bearer <key>` */
  auth?: 'x-api-key' | 'bearer'
  /** more headers for every request */
  headers?: Record<string, string>
}

/** What a call resolves to: the `data` of a 2xx envelope (a body that is no envelope, e.g. /metrics, as it is). */
export type DataOf<R> = R extends { data: infer Body } ? (Body extends { success: true, data: infer D } ? D : Body) : never

// openapi-fetch's own rule for when `init` may be left out (it does not export it)
type InitParam<Init> = RequiredKeysOf<Init> extends never ? [(Init & { [key: string]: unknown })?] : [Init & { [key: string]: unknown }]

/** One HTTP method: openapi-fetch's signature, resolving to the unwrapped `data`. */
export type Call<M extends HttpMethod> = <P extends PathsWithMethod<paths, M>, I extends MaybeOptionalInit<paths[P], M>>(
  url: P,
  ...init: InitParam<I>
) => Promise<paths[P][M] extends infer Op extends Record<string | number, unknown> ? DataOf<FetchResponse<Op, I, MediaType>> : never>

export interface StatusTracker {
  GET: Call<'get'>
  POST: Call<'post'>
  PUT: Call<'put'>
  PATCH: Call<'patch'>
  DELETE: Call<'delete'>
  /** the openapi-fetch client underneath (`{ data, error, response }` as it comes), for what the methods above do not cover */
  raw: Client<paths>
}

function isEnvelope (body: unknown): body is { success: boolean, data?: unknown, error?: unknown } {
  return typeof body === 'object' && body !== null && typeof (body as { success?: unknown }).success === 'boolean'
}

/** The error a non-2xx answer becomes. */
export function errorOf (response: Response, body: unknown): StatusTrackerError {
  const message = isEnvelope(body) && typeof body.error === 'string'
    ? body.error
    : `HTTP ${response.status}${response.statusText !== '' ? ` ${response.statusText}` : ''}`
  return new StatusTrackerError(response.status, message, body, response.headers)
}

/**
 * A body with a Blob (or File) among its fields is sent as multipart/form-data, one part per field (the
 * uploads: `{ image: blob }`); any other body as openapi-fetch sends it (JSON).
 */
export function serializeBody (body: unknown, headers?: unknown): unknown {
  if (typeof body !== 'object' || body === null || body instanceof FormData || !Object.values(body).some((v) => v instanceof Blob)) {
    // openapi-fetch passes the headers too (a form-urlencoded Content-Type), which its types leave out
    return (defaultBodySerializer as (body: unknown, headers?: unknown) => unknown)(body, headers)
  }
  const form = new FormData()
  for (const [name, value] of Object.entries(body)) {
    if (value instanceof Blob) form.append(name, value)
    else if (value !== undefined) form.append(name, String(value))
  }
  return form
}

/**
 * A client of one service. Every method takes openapi-fetch's arguments (`params.path`, `params.query`,
 * `body`) and resolves to the answer's `data`, or rejects with a StatusTrackerError. Network failures reject
 * with fetch's own error.
 */
export function createClient (options: StatusTrackerOptions): StatusTracker {
  const { apiKey, auth = 'x-api-key', headers = {}, ...rest } = options
  const keyHeader = auth === 'bearer' ? { authorization: `Bearer ${apiKey}` } : { 'x-api-key': apiKey }
  const raw = createFetchClient<paths>({ bodySerializer: serializeBody, ...rest, headers: { ...headers, ...keyHeader } })

  type Answer = { data?: unknown, error?: unknown, response: Response }
  const call = (method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE') => async (url: string, ...init: unknown[]): Promise<unknown> => {
    const { data, error, response } = await (raw[method] as (url: string, ...init: unknown[]) => Promise<Answer>)(url, ...init)
    if (!response.ok) throw errorOf(response, error)
    return isEnvelope(data) && data.success && 'data' in data ? data.data : data
  }
  return {
    GET: call('GET') as Call<'get'>,
    POST: call('POST') as Call<'post'>,
    PUT: call('PUT') as Call<'put'>,
    PATCH: call('PATCH') as Call<'patch'>,
    DELETE: call('DELETE') as Call<'delete'>,
    raw
  }
}
