import { Type, type Static, type TSchema } from '@sinclair/typebox'

/** The one failure body of the whole API, added once with addSchema and referenced by every route. */
export const ErrorEnvelopeSchema = Type.Object({
  success: Type.Literal(false),
  error: Type.String({ description: 'What went wrong, written for people' })
}, { $id: 'ErrorEnvelope', title: 'ErrorEnvelope', additionalProperties: false })
export type ErrorEnvelope = Static<typeof ErrorEnvelopeSchema>

export const ErrorRef = Type.Unsafe<ErrorEnvelope>(Type.Ref(ErrorEnvelopeSchema))

/** `{ success: true, data }` around a payload schema. */
export const Ok = <T extends TSchema>(data: T) => Type.Object({ success: Type.Literal(true), data })

type ErrorCode = 400 | 401 | 403 | 404 | 409 | 413 | 429 | 500 | 502 | 503
/**
 * Response map entries for the failure codes a route can send; 401, 403 (a scoped key without the route's
 * scope), 429 and 500 apply to every /api route,
 * and `4xx` covers what the framework itself may answer (415 content type, …; an over-long path parameter is the route schema's 400).
 */
export function failures (...codes: ErrorCode[]): Record<number | '4xx', typeof ErrorRef> {
  const out: Record<number | '4xx', typeof ErrorRef> = { '4xx': ErrorRef }
  for (const code of new Set<ErrorCode>([...codes, 401, 403, 429, 500])) out[code] = ErrorRef
  return out
}
