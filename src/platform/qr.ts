import QRCode from 'qrcode'

/** The platform's QR string as a PNG data URL, large enough for a phone camera off a screen. */
export async function qrDataUrl (qr: string): Promise<string> {
  return await QRCode.toDataURL(qr, { errorCorrectionLevel: 'M', margin: 2, scale: 6 })
}
