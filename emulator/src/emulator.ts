/**
 * The emulated WhatsApp Web server: accepts Baileys connections at `/ws/chat`, links companions
 * for emulated phones (QR or pairing code), logs them in, takes their statuses and sends receipts.
 */
import { rm } from 'node:fs/promises'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { BinaryNode } from '@whiskeysockets/baileys'
import type { WebSocket } from 'ws'
import { buildCertChain, ensureTlsFiles, temporaryTlsFiles } from './certs.js'
import type { ConnectionHandler } from './connection.js'
import { WaConnection } from './connection.js'
import { handleControlRequest } from './control-api.js'
import { EmulatorError } from './errors.js'
import { handleIq, type IqHost } from './iq-handlers.js'
import { MediaServer } from './media-server.js'
import type { HandshakeResult } from './noise.js'
import { StatusCenter } from './statuses.js'
import type { EmulatorOptions, ConnectionLogEntry } from './types.js'
import { AccountServer } from './server-accounts.js'
import type { Emulator } from './emulator-api.js'
import { DEFAULT_WAIT_MS, CONNECTION_LOG_SIZE } from './server-base.js'

export { CONNECTION_LOG_SIZE }
export type { Emulator }

export async function startEmulator (options: EmulatorOptions = {}): Promise<Emulator> {
  const emulator = new EmulatorServer(options)
  await emulator.start(options)
  return emulator
}

/**
 * The server: the last layer (connections, the stanzas they send routed to the layer that handles them,
 * start and stop) of a chain of one file per concern, server-base.ts → server-linking.ts → server-phone.ts →
 * server-receipts.ts → server-statuses.ts → server-accounts.ts → here.
 */
export class EmulatorServer extends AccountServer implements Emulator, IqHost, ConnectionHandler {
  async start (options: EmulatorOptions): Promise<void> {
    const tls = options.tls ? await ensureTlsFiles(options.tls) : await temporaryTlsFiles()
    this.caFile = tls.certFile
    this.temporaryDir = tls.temporaryDir
    this.certChain = buildCertChain(this.root, this.serverStatic.public)
    this.media = await MediaServer.start(tls, this.config.mediaPort, this.logger)
    this.center = new StatusCenter(this.directory, this.media, this.logger, (poster, deviceId, receipt) => {
      // the retry receipt goes to the device that posted (offline: at its next login)
      const device = poster.companions.get(deviceId)
      if (device && !device.removed) this.deliverToDevice(poster, device, [receipt])
    }, this.strictStatusRetries)
    const http = createServer((req, res) => void handleControlRequest(this, req, res))
    http.on('upgrade', (req, socket, head) => {
      const path = new URL(req.url ?? '/', 'http://127.0.0.1').pathname
      if (path !== '/ws/chat' || this.stopped) {
        socket.end('HTTP/1.1 404 Not Found\r\n\r\n')
        return
      }
      this.wss.handleUpgrade(req, socket, head, (ws) => this.onWebSocket(ws))
    })
    try {
      await new Promise<void>((resolve, reject) => {
        http.once('error', reject)
        http.listen(this.config.port, '127.0.0.1', () => resolve())
      })
    } catch (error) {
      await this.media.stop()
      throw error
    }
    this.http = http
    const { port } = http.address() as AddressInfo
    this.wsUrl = `ws://127.0.0.1:${port}/ws/chat`
    this.controlUrl = `http://127.0.0.1:${port}`
    this.mediaUrl = this.media.url
    this.logger.info({ wsUrl: this.wsUrl, mediaUrl: this.mediaUrl }, 'emulator listening')
  }

  async stop (): Promise<void> {
    if (this.stopped) return
    this.stopped = true
    for (const conn of this.connections) {
      if (conn.registration?.closeTimer) clearTimeout(conn.registration.closeTimer)
      conn.terminate()
    }
    this.connections.clear()
    this.refs.clear()
    for (const timer of this.statusDeadlines) clearTimeout(timer)
    this.statusDeadlines.clear()
    this.center?.close()
    for (const listener of this.changeListeners) listener()
    this.wss.close()
    if (this.http) {
      this.http.closeAllConnections()
      await new Promise<void>((resolve) => this.http!.close(() => resolve()))
    }
    await this.media?.stop()
    if (this.temporaryDir) await rm(this.temporaryDir, { recursive: true, force: true })
  }

  // ---------------------------------------------------------------- connections

  private onWebSocket (ws: WebSocket): void {
    const conn = new WaConnection(ws, this.serverStatic, this.certChain, this, this.logger)
    this.connections.add(conn)
    const entry: ConnectionLogEntry = { id: conn.id, number: null, openedAt: conn.openedAt.toISOString(), loggedInAt: null, closedAt: null }
    this.connectionEntries.set(conn, entry)
    this.connectionHistory.push(entry)
    if (this.connectionHistory.length > CONNECTION_LOG_SIZE) this.connectionHistory.shift()
    this.logger.debug({ conn: conn.id }, 'client connected')
  }

  onClose (conn: WaConnection): void {
    this.connections.delete(conn)
    const entry = this.connectionEntries.get(conn)
    if (entry !== undefined) entry.closedAt = new Date().toISOString()
    this.connectionEntries.delete(conn)
    // what it left unacked stays with its device (conn.device.acks) for the next login
    if (conn.acks) conn.acks.closedAt = new Date()
    const registration = conn.registration
    if (registration) {
      if (registration.closeTimer) clearTimeout(registration.closeTimer)
      for (const { ref } of registration.refs) this.refs.delete(ref)
      registration.linkCode?.attempt?.settle(new EmulatorError(409, 'the client closed the connection during pairing'))
    }
    this.logger.debug({ conn: conn.id, device: conn.device?.id }, 'client disconnected')
    this.changed()
  }

  onHandshake (conn: WaConnection, { payload }: HandshakeResult): void {
    if (payload.devicePairingData) {
      this.startRegistration(conn, payload.devicePairingData)
    } else {
      this.login(conn, payload)
    }
  }

  async onNode (conn: WaConnection, node: BinaryNode): Promise<void> {
    switch (node.tag) {
      case 'iq':
        if (node.attrs.type === 'result' || node.attrs.type === 'error') {
          this.onIqResponse(conn, node)
        } else {
          await handleIq(this, conn, node)
        }
        return
      case 'message':
        this.onMessage(conn, node)
        return
      case 'status':
        // WA Web's newer publish stanza (publish-stanza.ts); contacts' statuses only ever come the other way
        this.onMessage(conn, node)
        return
      case 'ack':
        if (conn.account && conn.device && conn.acks) {
          const acked = conn.device.acks.ackedStanza(node, conn.acks)
          if (acked) this.contactStatuses.acked(acked, node)
          else this.contactStatuses.unmatchedAck(conn.account, conn.device.id, node)
        }
        return
      case 'receipt':
        if (conn.account && conn.device && conn.acks) {
          conn.device.acks.receipt(node, conn.acks)
          this.contactStatuses.receipt(conn.account, conn.device.id, node)
        }
        return
      case 'presence':
      case 'ib':
      case 'chatstate':
      case 'notification':
      case 'call':
        return
      default:
        this.logger.debug({ tag: node.tag, attrs: node.attrs }, 'unhandled client stanza')
    }
  }

  async settled (timeoutMs = DEFAULT_WAIT_MS): Promise<void> {
    const deadline = Date.now() + timeoutMs
    let timer: NodeJS.Timeout | undefined
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new EmulatorError(504, `emulator still busy after ${timeoutMs} ms`)), timeoutMs)
    })
    try {
      await Promise.race([Promise.all([...this.connections].map((c) => c.idle())), timeout])
      await Promise.race([Promise.all([...this.phoneWork, ...[...this.phones.values()].map((p) => p.appState.idle())]), timeout])
      await this.statusCenter.idle(Math.max(1, deadline - Date.now()))
    } finally {
      clearTimeout(timer)
    }
  }
}
