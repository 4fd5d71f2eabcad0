import { createRequire } from 'node:module'
import { Readable } from 'node:stream'
import type { SerializerSelector as SerializerSelectorType } from '@fastify/fast-json-stringify-compiler'
import type { TSchema } from '@sinclair/typebox'
import type { FastifyReply } from 'fastify'

const require = createRequire(import.meta.url)
const serializerSelector = (): typeof SerializerSelectorType =>
  (require('@fastify/fast-json-stringify-compiler') as { SerializerSelector: typeof SerializerSelectorType }).SerializerSelector

/**
 * Characters per piece, far under V8's large-object size: a string of more than 128 KiB
 * (kMaxRegularHeapObjectSize) is placed in the large-object space, fresh pages for each: flattening a
 * fresh 165 KB JSON string (Buffer.byteLength) cost ~1 ms of CPU here, one of 125 KB 35 µs, and the service's
 * 500-status list ~1 ms more CPU per request as one string than in pieces (bench/NOTES.md, "The list in pieces").
 */
export const PIECE_CHARS = 32 * 1024

type Serialize<T> = (item: T) => string

/**
 * `{ success: true, data: [...] }` for an array that may be long (the pieced-json speed trick,
 * src/speed-tricks.ts): the items are serialised one by one with the item schema (the same compiler, so the
 * same text as the route's response schema gives) and sent as pieces of at most about PIECE_CHARS, with
 * their Content-Length. An answer of one piece is sent as the string it is. `plain` (the trick off): the
 * envelope is returned for the route's response schema to serialise, as one string.
 */
export function piecedArrayAnswer<T> (itemSchema: TSchema, plain: boolean) {
  let item: Serialize<T> | undefined
  const compile = (): Serialize<T> =>
    serializerSelector()()({}, {})({ schema: itemSchema, method: 'GET', url: '', httpStatus: '200' }) as Serialize<T>
  return (reply: FastifyReply, data: T[]): FastifyReply | { success: true, data: T[] } => {
    if (plain) return { success: true, data }
    item ??= compile()
    const pieces: string[] = []
    let piece = '{"success":true,"data":['
    for (let i = 0; i < data.length; i++) {
      piece += i === 0 ? item(data[i]) : ',' + item(data[i])
      if (piece.length >= PIECE_CHARS) { pieces.push(piece); piece = '' }
    }
    pieces.push(piece + ']}')
    reply.type('application/json; charset=utf-8')
    if (pieces.length === 1) return reply.send(pieces[0])
    let bytes = 0
    for (const p of pieces) bytes += Buffer.byteLength(p)
    reply.header('content-length', bytes)
    return reply.send(Readable.from(pieces))
  }
}
