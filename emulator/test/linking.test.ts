import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { DisconnectReason, type WASocket } from '@whiskeysockets/baileys'
import QRCode from 'qrcode'
import {
  ConnectError,
  connectUntilOpen,
  endSocket,
  linkWithCode,
  linkWithQr,
  makeMemoryAuthState,
  trustEmulatorRoot,
  unrefBaileysUploadTimer,
  waitForClose
} from '../src/baileys-helpers.js'
import { EmulatorError, startEmulator, testCertPaths, type Emulator } from '../src/index.js'

describe('linking', () => {
  let emu: Emulator
  const sockets: WASocket[] = []

  before(async () => {
    unrefBaileysUploadTimer()
    emu = await startEmulator({ tls: testCertPaths(), linkTimeoutMs: 5_000 })
    trustEmulatorRoot(emu.rootPublicKey)
  })

  after(async () => {
    await Promise.all(sockets.map((s) => endSocket(s)))
    await emu.stop()
  })

  it('links a companion when the phone scans the QR image, then logs in again with the stored credentials', async () => {
    const account = emu.createAccount('15551230001')
    let shownImage = ''
    const { sock, auth } = await linkWithQr(emu, account.number, {
      qrToScan: async (qr) => {
        shownImage = await QRCode.toDataURL(qr)
        return shownImage
      }
    })
    sockets.push(sock)
    assert.match(shownImage, /^data:image\/png;base64,/)
    assert.equal(sock.user?.id, `${account.number}:1@s.whatsapp.net`)
    assert.equal(sock.user?.lid, `${account.lid}:1@lid`)

    const info = emu.getAccount(account.number)
    assert.equal(info.connected, true)
    assert.equal(info.linkedDevices.length, 1)
    assert.equal(info.linkedDevices[0].device, 1)
    assert.equal(info.linkedDevices[0].preKeysOnServer, 812)

    await endSocket(sock)
    let qrShown = false
    const again = await connectUntilOpen({ wsUrl: emu.wsUrl, auth, onQr: () => (qrShown = true) })
    sockets.push(again)
    assert.equal(qrShown, false, 'a linked device must not be shown a QR')
    assert.equal(again.user?.id, `${account.number}:1@s.whatsapp.net`)
    // the emulator remembered the uploaded prekeys, so the client did not upload another batch
    assert.equal(emu.getAccount(account.number).linkedDevices[0].preKeysOnServer, 812)
    await endSocket(again)
  })

  it('links with a pairing code', async () => {
    const account = emu.createAccount('15551230002')
    const { sock, code, auth } = await linkWithCode(emu, account.number)
    sockets.push(sock)
    assert.match(code, /^[0-9A-Z]{8}$/)
    assert.equal(sock.user?.id, `${account.number}:1@s.whatsapp.net`)
    assert.equal(auth.creds.registered, true)
    assert.equal(emu.getAccount(account.number).connected, true)
    await endSocket(sock)
  })

  it('rejects a wrong pairing code with a clear error, and accepts the right one afterwards', async () => {
    const account = emu.createAccount('15551230003')
    const auth = makeMemoryAuthState()
    let wrongCodeError: unknown
    let requested: Promise<void> | undefined
    const sock = await connectUntilOpen({
      wsUrl: emu.wsUrl,
      auth,
      onQr: (_qr, qrSock) => {
        requested ??= (async () => {
          const code = await qrSock.requestPairingCode(account.number)
          const wrong = code.startsWith('A') ? `B${code.slice(1)}` : `A${code.slice(1)}`
          wrongCodeError = await emu.enterCode(account.number, wrong).then(
            () => undefined,
            (error: unknown) => error
          )
          await emu.enterCode(account.number, code)
        })()
        requested.catch(() => undefined)
      }
    })
    sockets.push(sock)
    await requested
    assert.ok(wrongCodeError instanceof EmulatorError, 'entering a wrong code must fail')
    assert.equal(wrongCodeError.status, 400)
    assert.match(wrongCodeError.message, /wrong code/)
    assert.equal(sock.user?.id, `${account.number}:1@s.whatsapp.net`)
    await endSocket(sock)
  })

  it('refuses the login of a device it does not know with 401 (loggedOut)', async () => {
    const account = emu.createAccount('15551230004')
    const auth = makeMemoryAuthState()
    auth.creds.me = { id: `${account.number}:7@s.whatsapp.net`, name: 'never linked' }
    await assert.rejects(
      connectUntilOpen({ wsUrl: emu.wsUrl, auth }),
      (error: unknown) => error instanceof ConnectError && error.statusCode === DisconnectReason.loggedOut
    )
  })

  it('reports unknown and expired QR codes and ends the attempt when all refs expired', async () => {
    const short = await startEmulator({ tls: testCertPaths(), qr: { refs: 2, firstTtlMs: 400, nextTtlMs: 400, closeGraceMs: 300 } })
    try {
      const account = short.createAccount('15551230005')
      const qrs: string[] = []
      const auth = makeMemoryAuthState()
      // Baileys' own QR timer on the same schedule ends the attempt with 408
      const attempt = connectUntilOpen({
        wsUrl: short.wsUrl,
        auth,
        config: { qrTimeout: 400 },
        onQr: (qr) => qrs.push(qr)
      })
      const outcome = attempt.then(
        () => undefined,
        (error: unknown) => error
      )
      await assert.rejects(short.scan(account.number, 'bm90LWEtcmVm,AAAA,AAAA,AAAA,1'), (e: unknown) => e instanceof EmulatorError && e.status === 400)
      const deadline = Date.now() + 3_000
      while (qrs.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
      assert.equal(qrs.length, 2, 'the second ref is shown after the first expires')
      await assert.rejects(short.scan(account.number, qrs[0]), (e: unknown) => e instanceof EmulatorError && /expired/.test(e.message))
      const error = await outcome
      assert.ok(error instanceof ConnectError)
      assert.equal(error.statusCode, DisconnectReason.timedOut)
      assert.equal(qrs.length, 2)

      // a client that keeps showing its QR longer than the refs live is dropped by the server
      const lingering = makeMemoryAuthState()
      let sock: WASocket | undefined
      const closed = new Promise<number | undefined>((resolve) => {
        void connectUntilOpen({
          wsUrl: short.wsUrl,
          auth: lingering,
          config: { qrTimeout: 10_000 },
          onSocket: (s) => {
            sock = s
            void waitForClose(s, 5_000).then((c) => resolve(c.statusCode), () => resolve(undefined))
          }
        }).catch(() => undefined)
      })
      assert.equal(await closed, DisconnectReason.connectionClosed)
      await endSocket(sock)
    } finally {
      await short.stop()
    }
  })
})
