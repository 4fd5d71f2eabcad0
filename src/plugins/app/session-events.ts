import fp from 'fastify-plugin'

/** Forwards the platform's session events to socket.io clients, adding what the stored row knows. */
export default fp(async (app) => {
  app.platform.on('connection-status', (e) => {
    app.broadcaster.emit('connection-status', { sessionId: e.sessionId, connected: e.connected, status: e.status, ownNumber: e.ownNumber, ...(e.reason !== undefined ? { reason: e.reason } : {}) })
  })
  app.platform.on('pairing-code', (e) => {
    app.broadcaster.emit('pairing-code', { sessionId: e.sessionId, pairingCode: e.pairingCode, phoneNumber: e.phoneNumber, authMethod: 'pairing' })
  })
  app.platform.on('pairing-code-error', (e) => { app.broadcaster.emit('pairing-code-error', e) })
  // the platform offers QR codes to QR sessions only; pairing sessions get codes
  app.platform.on('qr-code', (e) => { app.broadcaster.emit('qr-code', { sessionId: e.sessionId, qrCode: e.qrCode, authMethod: 'qrcode' }) })
  app.platform.on('qr-code-error', (e) => { app.broadcaster.emit('qr-code-error', e) })
}, { name: 'session-events', dependencies: ['platform', 'broadcaster'] })
