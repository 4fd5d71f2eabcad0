import type { Session } from '../../src/db/stores/sessions.js'
import type { SessionSnapshot } from '../../src/platform/types.js'
import type { SessionView } from '../../schemas/session.js'

/**
 * The live state from the platform over the stored row. While not connected the own number is hidden
 * (the row keeps the last one); only the code the session links by is shown, and only until connected.
 */
export function sessionView (row: Session, snap: SessionSnapshot | null): SessionView {
  const connected = snap?.connected ?? false
  return {
    sessionId: row.id,
    sessionName: row.name,
    authMethod: row.authMethod,
    phoneNumber: row.phoneNumber,
    connected,
    status: snap?.status ?? 'close',
    ownNumber: connected ? snap?.ownNumber ?? row.ownNumber : null,
    createdAt: new Date(row.createdAt).toISOString(),
    pairingCode: connected || row.authMethod !== 'pairing' ? null : snap?.pairingCode ?? null,
    qrCode: connected || row.authMethod !== 'qrcode' ? null : snap?.qrCode ?? null
  }
}
