import { Type, type TArray, type TObject, type TSchema } from '@sinclair/typebox'
import type { FastifyReply } from 'fastify'
import { serializerSelector } from './validation.js'

/**
 * Characters per piece, far under V8's large-object size: a string of more than 128 KiB
 * (kMaxRegularHeapObjectSize) is placed in the large-object space, fresh pages for each: flattening a
 * fresh 165 KB JSON string (Buffer.byteLength) cost ~1 ms of CPU here, one of 125 KB 35 µs, and the service's
 * 500-status list ~1 ms more CPU per request as one string than in pieces (bench/NOTES.md, "The list in pieces").
 */
export const PIECE_CHARS = 32 * 1024

type Serialize<T> = (value: T) => string

const compile = <T>(schema: TSchema): Serialize<T> =>
  serializerSelector()()({}, {})({ schema, method: 'GET', url: '', httpStatus: '200' }) as Serialize<T>

/** `head`, the items joined by commas, `tail`: in pieces of about PIECE_CHARS written into one Buffer, or one string when that is all. */
function sendPieces<I> (reply: FastifyReply, head: string, items: readonly I[], item: Serialize<I>, tail: string): FastifyReply {
  const pieces: string[] = []
  let piece = head
  for (let i = 0; i < items.length; i++) {
    piece += i === 0 ? item(items[i]) : ',' + item(items[i])
    if (piece.length >= PIECE_CHARS) { pieces.push(piece); piece = '' }
  }
  pieces.push(piece + tail)
  reply.type('application/json; charset=utf-8')
  if (pieces.length === 1) return reply.send(pieces[0])
  // one Buffer, written in one go: a stream of the pieces waited a turn of the event loop per piece for the
  // socket to drain, which under the load of a 1,000-session start made GET /api/stats slower, not faster
  let bytes = 0
  for (const p of pieces) bytes += Buffer.byteLength(p)
  const body = Buffer.allocUnsafe(bytes)
  let at = 0
  for (const p of pieces) at += body.write(p, at)
  return reply.send(body)
}

/**
 * `{ success: true, data: [...] }` for an array that may be long (the pieced-json speed trick,
 * src/speed-tricks.ts): the items are serialised one by one with the item schema (the same compiler, so the
 * same text as the route's response schema gives) in pieces of at most about PIECE_CHARS, written into one
 * Buffer. An answer of one piece is sent as the string it is. `plain` (the trick off): the
 * envelope is returned for the route's response schema to serialise, as one string.
 */
export function piecedArrayAnswer<T> (itemSchema: TSchema, plain: boolean) {
  let item: Serialize<T> | undefined
  return (reply: FastifyReply, data: T[]): FastifyReply | { success: true, data: T[] } => {
    if (plain) return { success: true, data }
    item ??= compile<T>(itemSchema)
    return sendPieces(reply, '{"success":true,"data":[', data, item, ']}')
  }
}

/**
 * The same for `{ success: true, data: {...} }` whose last property `key` is a long array (GET /api/stats: every
 * session): the other properties are serialised by the object's schema with the array empty, the array's items
 * one by one.
 */
export function piecedObjectAnswer<T extends Record<K, unknown[]>, K extends string> (schema: TObject, key: K, plain: boolean) {
  const keys = Object.keys(schema.properties)
  const array = schema.properties[key]
  if (keys.at(-1) !== key || array === undefined || array.type !== 'array') throw new Error(`piecedObjectAnswer: ${key} is not the last property of the schema, an array`)
  let head: Serialize<{ success: true, data: T }> | undefined
  let item: Serialize<T[K][number]> | undefined
  const end = ']}}'
  return (reply: FastifyReply, data: T): FastifyReply | { success: true, data: T } => {
    if (plain) return { success: true, data }
    head ??= compile(Type.Object({ success: Type.Literal(true), data: schema }))
    item ??= compile((array as TArray).items)
    const empty = head({ success: true, data: { ...data, [key]: [] } })
    if (!empty.endsWith(`[${end}`)) throw new Error(`piecedObjectAnswer: the answer does not end with its empty ${key}`)
    return sendPieces(reply, empty.slice(0, -end.length), data[key], item, end)
  }
}
