import type { SessionRecord } from '../../src/db/stores/sessions.js'
import type { SessionSnapshot } from '../../src/platform/types.js'
import type { SessionView } from '../../schemas/session.js'

/**
 * The live state from the platform over the stored row. While not connected the own number is hidden
 * (the row keeps the last one); only the code the session links by is shown, and only until connected.
 */
export function sessionView (row: SessionRecord, snap: SessionSnapshot | null): SessionView {
  const connected = snap?.connected ?? false
  return {
    sessionId: row.id,
    sessionName: row.name,
    authMethod: row.auth_method,
    phoneNumber: row.phone_number,
    connected,
    status: snap?.status ?? 'close',
    ownNumber: connected ? snap?.ownNumber ?? row.own_number : null,
    createdAt: new Date(row.created_at).toISOString(),
    pairingCode: connected || row.auth_method !== 'pairing' ? null : snap?.pairingCode ?? null,
    qrCode: connected || row.auth_method !== 'qrcode' ? null : snap?.qrCode ?? null
  }
}
