/** Read a linking QR the way a phone camera would: from a `data:image/png;base64,…` image. */
import jsQRModule from 'jsqr'
import { PNG } from 'pngjs'
import { EmulatorError } from './errors.js'

// jsqr is a webpack UMD bundle: under ESM the callable is its `default` export property
const jsQR = jsQRModule.default

const DATA_URL = /^data:image\/png;base64,([A-Za-z0-9+/=\s]+)$/

export function isPngDataUrl (value: string): boolean {
  return value.trimStart().startsWith('data:image/')
}

export function decodeQrDataUrl (dataUrl: string): string {
  const match = DATA_URL.exec(dataUrl.trim())
  if (!match) {
    throw new EmulatorError(400, 'qr image must be a data:image/png;base64 URL')
  }
  let png: PNG
  try {
    png = PNG.sync.read(Buffer.from(match[1], 'base64'))
  } catch (error) {
    throw new EmulatorError(400, `qr image is not a readable PNG: ${(error as Error).message}`)
  }
  const code = jsQR(new Uint8ClampedArray(png.data.buffer, png.data.byteOffset, png.data.length), png.width, png.height)
  if (!code?.data) {
    throw new EmulatorError(400, 'no QR code found in the image')
  }
  return code.data
}
