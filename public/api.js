// The dashboard's only way to the service: the public REST API under /api, with the key on every call.

/** A failure the page can show as it is: the envelope's `error`, or a sentence about the transport. */
export class ApiError extends Error {
  /** @param {string} message @param {number} status HTTP status, 0 when the server was not reached */
  constructor (message, status) {
    super(message)
    this.name = 'ApiError'
    this.status = status
  }
}

/** A 404 for the path itself (this server has no such route), not for a session or record it names. */
export function isMissingRoute (err) {
  return err instanceof ApiError && err.status === 404 && err.message === 'Route not found'
}

/** The envelope's error message, or a fallback naming the HTTP status. */
function errorFrom (status, payload) {
  if (payload !== null && typeof payload === 'object' && typeof payload.error === 'string' && payload.error !== '') return payload.error
  if (status === 0) return 'Cannot reach the server. Check that it is running and try again.'
  return `The server answered HTTP ${status} without an error message.`
}

/**
 * @param {() => string | null} getKey the API key in use
 * @param {(message: string) => void} onUnauthorized called when the server refuses the key (401)
 */
export function createApi (getKey, onUnauthorized) {
  /** One JSON call; resolves to the envelope's `data`, rejects with an ApiError. */
  async function request (method, path, body, key = getKey()) {
    const headers = { accept: 'application/json', 'x-api-key': key ?? '' }
    // only with a body: an empty body declared as JSON is a 400
    if (body !== undefined) headers['content-type'] = 'application/json'
    let res
    try {
      res = await fetch('/api' + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), cache: 'no-store' })
    } catch {
      throw new ApiError(errorFrom(0, null), 0)
    }
    let payload = null
    try { payload = await res.json() } catch { /* not JSON: reported by status below */ }
    if (res.status === 401) throw new ApiError(errorFrom(401, payload), 401)
    if (!res.ok || payload === null || payload.success !== true) throw new ApiError(errorFrom(res.status, payload), res.status)
    return payload.data
  }

  /** The same call, but a refused key locks the page (the user is asked for the key again). */
  async function call (method, path, body) {
    try {
      return await request(method, path, body)
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) onUnauthorized(err.message)
      throw err
    }
  }

  /**
   * Uploads one file with XMLHttpRequest (fetch reports no upload progress).
   * @param {'image' | 'video' | 'audio'} kind
   * @param {File} file
   * @param {(fraction: number) => void} onProgress 0..1
   * @returns {Promise<string>} the stored filename, for send-status
   */
  function upload (kind, file, onProgress) {
    return new Promise((resolve, reject) => {
      const xhr = new XMLHttpRequest()
      xhr.open('POST', `/api/upload-${kind}`)
      xhr.setRequestHeader('x-api-key', getKey() ?? '')
      xhr.setRequestHeader('accept', 'application/json')
      xhr.responseType = 'text'
      xhr.upload.addEventListener('progress', (e) => { if (e.lengthComputable) onProgress(e.loaded / e.total) })
      xhr.addEventListener('load', () => {
        let payload = null
        try { payload = JSON.parse(xhr.responseText) } catch { /* reported below */ }
        if (xhr.status === 401) {
          onUnauthorized(errorFrom(401, payload))
          reject(new ApiError(errorFrom(401, payload), 401))
          return
        }
        // the upload answer carries the filename at the top level and under data (both forms of the spec)
        const filename = payload?.filename ?? payload?.data?.filename
        if (xhr.status >= 200 && xhr.status < 300 && payload?.success === true && typeof filename === 'string') {
          onProgress(1)
          resolve(filename)
          return
        }
        reject(new ApiError(errorFrom(xhr.status, payload), xhr.status))
      })
      xhr.addEventListener('error', () => {
        reject(new ApiError('The upload was cut off before the server answered. The file may be over the size limit, or the server is unreachable.', 0))
      })
      xhr.addEventListener('abort', () => { reject(new ApiError('Upload cancelled.', 0)) })
      const form = new FormData()
      form.append(kind, file, file.name)
      xhr.send(form)
    })
  }

  /** A GET that answers bytes, not the envelope (media, CSV), as a Blob; failures as ApiError. */
  async function blob (path) {
    let res
    try {
      res = await fetch('/api' + path, { headers: { 'x-api-key': getKey() ?? '' }, cache: 'no-store' })
    } catch {
      throw new ApiError(errorFrom(0, null), 0)
    }
    if (res.ok) return await res.blob()
    let payload = null
    try { payload = await res.json() } catch { /* reported by status below */ }
    if (res.status === 401) onUnauthorized(errorFrom(401, payload))
    throw new ApiError(errorFrom(res.status, payload), res.status)
  }

  const enc = encodeURIComponent
  /** a query string of the parameters that have a value */
  const query = (params) => new URLSearchParams(Object.entries(params).filter(([, v]) => v !== null && v !== undefined && v !== '').map(([k, v]) => [k, String(v)])).toString()
  return {
    /** Checks a key before it is kept: resolves, or rejects with status 401 for a wrong key. */
    checkKey: (key) => request('GET', '/health', undefined, key),
    health: () => call('GET', '/health'),
    stats: () => call('GET', '/stats'),
    storage: () => call('GET', '/storage'),
    sessions: () => call('GET', '/sessions'),
    createSession: (body) => call('POST', '/sessions', body),
    deleteSession: (id) => call('DELETE', `/sessions/${enc(id)}`),
    restartSession: (id) => call('POST', `/sessions/${enc(id)}/restart`),
    setPhoneNumber: (id, phoneNumber) => call('PUT', `/sessions/${enc(id)}/phone-number`, { phoneNumber }),
    requestPairingCode: (id) => call('POST', `/sessions/${enc(id)}/request-pairing-code`),
    sendStatus: (id, body) => call('POST', `/sessions/${enc(id)}/send-status`, body),
    sentStatuses: (id) => call('GET', `/sessions/${enc(id)}/sent-statuses`),
    viewers: (id, statusId) => call('GET', `/sessions/${enc(id)}/status-viewers/${enc(statusId)}`),
    reactions: (id, statusId) => call('GET', `/sessions/${enc(id)}/status-reactions/${enc(statusId)}`),
    replies: (id, statusId) => call('GET', `/sessions/${enc(id)}/status-replies/${enc(statusId)}`),
    deleteStatus: (id, statusId, revoke) => call('DELETE', `/sessions/${enc(id)}/delete-status/${enc(statusId)}${revoke ? '?revoke=true' : ''}`),
    webhooks: () => call('GET', '/webhooks'),
    createWebhook: (body) => call('POST', '/webhooks', body),
    updateWebhook: (id, body) => call('PATCH', `/webhooks/${enc(id)}`, body),
    deleteWebhook: (id) => call('DELETE', `/webhooks/${enc(id)}`),
    rotateWebhookSecret: (id) => call('POST', `/webhooks/${enc(id)}/rotate-secret`),
    webhookDeliveries: (id, limit = 10) => call('GET', `/webhooks/${enc(id)}/deliveries?limit=${limit}`),
    retryWebhookDelivery: (id, deliveryId) => call('POST', `/webhooks/${enc(id)}/deliveries/${enc(deliveryId)}/retry`),
    schedules: (id) => call('GET', `/sessions/${enc(id)}/scheduled-statuses`),
    schedule: (id, scheduleId) => call('GET', `/sessions/${enc(id)}/scheduled-statuses/${enc(scheduleId)}`),
    createSchedule: (id, body) => call('POST', `/sessions/${enc(id)}/scheduled-statuses`, body),
    pauseSchedule: (id, scheduleId) => call('POST', `/sessions/${enc(id)}/scheduled-statuses/${enc(scheduleId)}/pause`),
    resumeSchedule: (id, scheduleId) => call('POST', `/sessions/${enc(id)}/scheduled-statuses/${enc(scheduleId)}/resume`),
    deleteSchedule: (id, scheduleId) => call('DELETE', `/sessions/${enc(id)}/scheduled-statuses/${enc(scheduleId)}`),
    contacts: (id, { search = '', limit = 20, cursor = null } = {}) =>
      call('GET', `/sessions/${enc(id)}/contacts?${query({ search, limit, cursor })}`),
    statusPrivacy: (id) => call('GET', `/sessions/${enc(id)}/status-privacy`),
    contactStatuses: (id, { limit = 20, cursor = null } = {}) => call('GET', `/sessions/${enc(id)}/contact-statuses?${query({ limit, cursor })}`),
    viewContactStatus: (id, statusId) => call('POST', `/sessions/${enc(id)}/contact-statuses/${enc(statusId)}/view`),
    contactStatusMedia: (id, statusId) => blob(`/sessions/${enc(id)}/contact-statuses/${enc(statusId)}/media`),
    likeContactStatus: (id, statusId, emoji) => call('POST', `/sessions/${enc(id)}/contact-statuses/${enc(statusId)}/like`, emoji === undefined ? {} : { emoji }),
    unlikeContactStatus: (id, statusId) => call('DELETE', `/sessions/${enc(id)}/contact-statuses/${enc(statusId)}/like`),
    replyToContactStatus: (id, statusId, text) => call('POST', `/sessions/${enc(id)}/contact-statuses/${enc(statusId)}/reply`, { text }),
    /** `q`: from, to (ISO), tz, type, audience, limit, cursor */
    insights: (id, q) => call('GET', `/sessions/${enc(id)}/insights?${query(q)}`),
    /** `q`: from, to, sort, order, limit, cursor */
    insightContacts: (id, q) => call('GET', `/sessions/${enc(id)}/insights/contacts?${query(q)}`),
    insightContactsCsv: (id, q) => blob(`/sessions/${enc(id)}/insights/contacts?${query({ ...q, format: 'csv' })}`),
    audiences: (id, { limit = 200, cursor = null } = {}) => call('GET', `/sessions/${enc(id)}/audiences?${query({ limit, cursor })}`),
    createAudience: (id, body) => call('POST', `/sessions/${enc(id)}/audiences`, body),
    deleteAudience: (id, audienceId) => call('DELETE', `/sessions/${enc(id)}/audiences/${enc(audienceId)}`),
    whoami: () => call('GET', '/keys/me'),
    keys: () => call('GET', '/keys'),
    createKey: (body) => call('POST', '/keys', body),
    revokeKey: (id) => call('DELETE', `/keys/${enc(id)}`),
    upload
  }
}
