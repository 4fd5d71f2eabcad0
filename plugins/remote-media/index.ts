import fp from 'fastify-plugin'
import { UrlFetchFailed, UrlRefused } from '../../src/errors.js'
import type { MediaKind } from '../../src/media/types.js'
import { checkUrl, fetchRemoteMedia, RemoteFetchError, type FetchedMedia, type RemoteFetchOptions } from '../../src/media/remote-fetch.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** the guarded fetch of `url` statuses' media (see media/remote-fetch.ts) */
    remoteMedia: RemoteMedia
  }
}

export interface RemoteMedia {
  /** refuses, before anything is sent, what can be refused without a network call (scheme, IP literals) */
  check: (url: URL) => void
  /** downloads into the upload folder (0600); the caller removes the file after the send */
  fetch: (url: URL, expected: MediaKind) => Promise<FetchedMedia>
}

/** RemoteFetchError → the API's errors: 400 for a refused URL, 502 when the remote failed. */
function toHttpError (err: unknown): unknown {
  if (!(err instanceof RemoteFetchError)) return err
  return err.kind === 'refused' ? new UrlRefused(err.message) : new UrlFetchFailed(err.message)
}

export function createRemoteMedia (opts: RemoteFetchOptions): RemoteMedia {
  return {
    check: (url) => {
      try { checkUrl(url, opts) } catch (err) { throw toHttpError(err) }
    },
    fetch: async (url, expected) => {
      try { return await fetchRemoteMedia(url, expected, opts) } catch (err) { throw toHttpError(err) }
    }
  }
}

export default fp(async (app) => {
  const { allowPrivateUrls, uploadDir, maxUploadBytes } = app.config
  if (allowPrivateUrls) {
    app.log.warn('WARNING: ALLOW_PRIVATE_URLS is set (development and tests only): url statuses may fetch from, and webhooks may deliver to, loopback, private and link-local addresses, including this machine\'s own services')
  }
  app.decorate('remoteMedia', createRemoteMedia({ dir: uploadDir, maxBytes: maxUploadBytes, allowPrivate: allowPrivateUrls }))
}, { name: 'remote-media', dependencies: ['config', 'media-store'] })
