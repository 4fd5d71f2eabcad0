import createError, { type FastifyError } from '@fastify/error'
import { PlatformError, type PlatformErrorCode } from './platform/errors.js'

// Every error the service answers with, made once. Handlers throw these; the one error handler in
// app.ts turns any error into `{ success: false, error }` with its statusCode.

export const Unauthorized = createError('ST_UNAUTHORIZED', 'Unauthorized', 401)
/** a scoped key without the scope the route needs, or a route for the admin key only */
export const Forbidden = createError<[string]>('ST_FORBIDDEN', '%s', 403)
export const KeyNotFound = createError('ST_KEY_NOT_FOUND', 'Key not found', 404)
export const RouteNotFound = createError('ST_ROUTE_NOT_FOUND', 'Route not found', 404)
export const BadRequest = createError<[string]>('ST_BAD_REQUEST', '%s', 400)

export const SessionExists = createError('ST_SESSION_EXISTS', 'Session already exists', 409)
export const SessionNotFound = createError('ST_SESSION_NOT_FOUND', 'Session not found', 404)
export const StatusNotFound = createError('ST_STATUS_NOT_FOUND', 'Status not found', 404)
/** a contact's status with no media (GET …/contact-statuses/{statusId}/media) */
export const NoStatusMedia = createError('ST_NO_STATUS_MEDIA', 'This status has no media', 404)
/** the platform's media server did not give a contact status' media (expired, unreachable) */
export const StatusMediaFailed = createError<[string]>('ST_STATUS_MEDIA_FAILED', 'Downloading the media failed: %s', 502)
export const StatusSending = createError('ST_STATUS_SENDING', 'Status is still being sent; delete it once it is sent or partial', 409)

export const AlreadyConnected = createError('ST_ALREADY_CONNECTED', 'Session is already connected', 400)
export const PhoneNotSet = createError('ST_PHONE_NOT_SET', 'Phone number not set for this session', 400)
export const PairingInProgress = createError('ST_PAIRING_IN_PROGRESS', 'Pairing code request already in progress', 409)
export const PairingUnavailable = createError('ST_PAIRING_UNAVAILABLE', 'Cannot generate pairing code at this time', 500)
export const NotQrSession = createError('ST_NOT_QR_SESSION', 'This session links by pairing code, not QR code', 400)
export const NotConnected = createError('ST_NOT_CONNECTED', 'WhatsApp is not connected', 500)
export const SendFailed = createError<[string]>('ST_SEND_FAILED', 'Failed to send status: %s', 500)

export const NoFileUploaded = createError('ST_NO_FILE', 'No file uploaded', 400)
export const WrongFileType = createError('ST_WRONG_FILE_TYPE', 'Only image and video files are allowed', 400)
/** an audio upload that is not OGG/Opus, MP3, M4A, AAC or WAV (by declared type, content or a readable duration) */
export const WrongAudioType = createError('ST_WRONG_AUDIO_TYPE', 'audio must be an audio file: OGG/Opus, MP3, M4A, AAC or WAV', 400)
export const FileTooLarge = createError('ST_FILE_TOO_LARGE', 'File too large', 413)
export const VideoTooLarge = createError<[number]>('ST_VIDEO_TOO_LARGE', 'File size exceeds %dMB limit', 413)
export const UploadNotFound = createError('ST_UPLOAD_NOT_FOUND', 'Uploaded file not found', 400)
/** a url status whose URL may not be fetched, or whose media is not acceptable (the client's URL is the problem) */
export const UrlRefused = createError<[string]>('ST_URL_REFUSED', 'URL refused: %s', 400)
/** a url status whose server could not be reached or answered with an error */
export const UrlFetchFailed = createError<[string]>('ST_URL_FETCH_FAILED', 'Fetching the URL failed: %s', 502)

export const WebhookNotFound = createError('ST_WEBHOOK_NOT_FOUND', 'Webhook not found', 404)
export const DeliveryNotFound = createError('ST_DELIVERY_NOT_FOUND', 'Delivery not found', 404)
export const DeliveryInFlight = createError('ST_DELIVERY_IN_FLIGHT', 'Delivery is being sent right now; try again when it finishes', 409)

/** the installed Baileys breaks an assumption the service relies on (src/platform/baileys/assumptions.ts): no session starts */
export const PlatformIncompatible = createError<[string]>('ST_PLATFORM_INCOMPATIBLE', '%s', 503)
export const ScheduleNotFound = createError('ST_SCHEDULE_NOT_FOUND', 'Schedule not found', 404)
export const AudienceNotFound = createError('ST_AUDIENCE_NOT_FOUND', 'Audience not found', 404)
/** send-status `audience` of the phone's contacts or status privacy while the phone has not sent them (yet) */
export const AudienceUnavailable = createError<[string]>('ST_AUDIENCE_UNAVAILABLE', '%s', 409)
/** pacing (SEND_MAX_STATUSES_PER_DAY, SEND_MAX_RECIPIENTS_PER_DAY, platform back-off); `headers` carries Retry-After */
export const PacingLimit = createError<[string]>('ST_PACING_LIMIT', '%s', 429)

/** cluster mode: the session's socket is on another node that did not answer (or no node holds it this moment) */
export const OwnerUnavailable = createError<[string]>('ST_OWNER_UNAVAILABLE', '%s', 503)

/** Status codes whose messages are written for users and shown as-is even when 5xx. */
export const EXPOSED_5XX_CODES = new Set(['ST_PAIRING_UNAVAILABLE', 'ST_NOT_CONNECTED', 'ST_SEND_FAILED', 'ST_URL_FETCH_FAILED', 'ST_STATUS_MEDIA_FAILED', 'ST_OWNER_UNAVAILABLE', 'ST_PLATFORM_INCOMPATIBLE'])

const FROM_PLATFORM: Record<PlatformErrorCode, (err: PlatformError) => FastifyError> = {
  SESSION_NOT_FOUND: () => new SessionNotFound(),
  NOT_CONNECTED: () => new NotConnected(),
  ALREADY_CONNECTED: () => new AlreadyConnected(),
  PHONE_NOT_SET: () => new PhoneNotSet(),
  PAIRING_IN_PROGRESS: () => new PairingInProgress(),
  PAIRING_UNAVAILABLE: () => new PairingUnavailable(),
  SEND_FAILED: (err) => new SendFailed(err.message),
  PLATFORM_INCOMPATIBLE: (err) => new PlatformIncompatible(err.message)
}

/** A platform error as the service answers it; any other error as it is. */
export function fromPlatform<E> (err: E): E | FastifyError {
  return err instanceof PlatformError ? FROM_PLATFORM[err.code](err) : err
}
