import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { MultipartFile } from '@fastify/multipart'
import type { FastifyRequest } from 'fastify'
import { Type } from '@sinclair/typebox'
import { failures } from '../../schemas/envelope.js'
import { UploadResultSchema } from '../../schemas/status.js'
import { NoFileUploaded } from '../../src/errors.js'
import { drain } from '../media-store/index.js'
import multipartPlugin from '../multipart/index.js'
import type { MediaKind } from '../../src/media/types.js'
import type { RouteScope } from '../keys/route-scope.js'

// a key that may post (`send`) may upload every kind it posts: image, video and audio (issue 42)
const KINDS: ReadonlyArray<{ kind: MediaKind, scope: RouteScope, summary: string, description: string }> = [
  {
    kind: 'image',
    scope: 'send',
    summary: 'Upload an image for an image status',
    description: 'multipart/form-data with one file in the field `image` (JPEG, PNG, GIF, WebP or BMP; checked by content). ' +
      'Answers the stored filename, to pass as `content` to send-status.'
  },
  {
    kind: 'video',
    scope: 'send',
    summary: 'Upload a video for a video status',
    description: 'multipart/form-data with one file in the field `video` (MP4, M4V, 3GP, 3G2, MOV, WebM, MKV, AVI, FLV or WMV; checked by content). ' +
      'Answers the stored filename, to pass as `content` to send-status.'
  },
  {
    kind: 'audio',
    scope: 'send',
    summary: 'Upload audio for an audio (voice) status',
    description: 'multipart/form-data with one file in the field `audio` (OGG/Opus, MP3, M4A, AAC or WAV; checked by content, and its duration read from it). ' +
      'Answers the stored filename, to pass as `content` to send-status with type `audio`, and the duration in `data.seconds`. ' +
      'OGG/Opus goes out as a voice note, the others as audio.'
  }
]

const routes: FastifyPluginAsyncTypebox = async (app) => {
  // multipart only here, where the uploads are read: registered at the root, @fastify/multipart's
  // onResponse hook (three promises, for files this service never saves to disk) ran on every request of
  // every route, and each promise costs more once Baileys' AsyncLocalStorage has turned on Node 20's async
  // hooks (bench/NOTES.md, "The first round was cold"). A multipart body to any other route is 415.
  await app.register(multipartPlugin)
  // Every body reaches the handler unparsed, so that JSON, text or unknown types answer
  // "No file uploaded" (400) instead of a parser error or 415; multipart keeps its own parser.
  app.removeContentTypeParser(['application/json', 'text/plain'])
  app.addContentTypeParser('*', (_req, _payload, done) => { done(null) })
  // The body schemas below only describe the form in OpenAPI; the handler reads and checks the stream itself.
  app.setValidatorCompiler(() => () => true)

  for (const { kind, scope, summary, description } of KINDS) {
    app.post(`/upload-${kind}`, {
      config: { scope },
      schema: {
        tags: ['uploads'],
        summary,
        description,
        consumes: ['multipart/form-data'],
        body: Type.Object({
          [kind]: Type.String({ format: 'binary', description: `The ${kind} file (${kind}/* content type${kind === 'audio' ? ', or application/ogg' : ''})` })
        }),
        response: { 200: UploadResultSchema, ...failures(400, 413) }
      }
    }, async (req) => {
      const file = await firstFile(req)
      // a browser sends an empty part with filename="" when no file was chosen
      if (file === undefined || file.fieldname !== kind || file.filename === '') {
        if (file !== undefined) await drain(file)
        throw new NoFileUploaded()
      }
      const saved = await app.mediaStore.save(file, kind)
      await app.keys.uploaded(saved.filename, req.principal)
      return { success: true as const, filename: saved.filename, data: saved }
    })
  }
}

/** The first file part, or undefined when the request is not multipart or holds no (readable) file. */
async function firstFile (req: FastifyRequest): Promise<MultipartFile | undefined> {
  if (!req.isMultipart()) return undefined
  try {
    return await req.file()
  } catch (err) {
    req.log.debug({ err }, 'unreadable multipart body')
    return undefined
  }
}

export default routes
