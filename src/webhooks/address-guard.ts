import { lookup as dnsLookup, type LookupAddress } from 'node:dns'
import { isIP, type LookupFunction } from 'node:net'
import { nonPublicRange } from '../net/address-ranges.js'

// Webhook targets must be public addresses unless ALLOW_PRIVATE_URLS is set: a webhook is a request the
// service makes on a user's behalf, and must not become a way to reach the host's own or its network's
// services. The ranges are the ones remote media fetching refuses (src/net/address-ranges.ts).

/** True when `address` (an IP literal) is loopback, private, link-local, reserved or multicast. */
export function isNonPublicAddress (address: string): boolean {
  return nonPublicRange(address) !== null
}

export class AddressRefused extends Error {
  override name = 'AddressRefused'
  readonly code = 'ADDRESS_REFUSED'
}

/**
 * Checks what can be checked without the network: http(s) only, no credentials in the URL, and an IP
 * literal host must be public. Returns the problem in words, or null.
 */
export function urlProblem (url: URL, allowPrivate: boolean): string | null {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must be an http:// or https:// URL'
  if (url.username !== '' || url.password !== '') return 'must not contain a user name or password'
  const host = url.hostname.replace(/^\[|\]$/g, '')
  if (allowPrivate) return null
  if (isIP(host) !== 0 && isNonPublicAddress(host)) return `points to a private or loopback address (${host}); set ALLOW_PRIVATE_URLS=true for development`
  if (/^localhost$|\.localhost$/i.test(host)) return 'points to localhost; set ALLOW_PRIVATE_URLS=true for development'
  return null
}

/** Every address `host` resolves to (empty when it does not resolve within `timeoutMs`). */
export async function resolveAll (host: string, timeoutMs = 3000): Promise<LookupAddress[]> {
  return await new Promise((resolve) => {
    const timer = setTimeout(() => { resolve([]) }, timeoutMs)
    dnsLookup(host, { all: true, verbatim: true }, (err, addresses) => { clearTimeout(timer); resolve(err === null ? addresses : []) })
  })
}

/**
 * A `lookup` for http.request that refuses names resolving to a non-public address, so the check holds
 * for the address actually connected to (a name cannot pass a check and then resolve elsewhere).
 */
export function guardedLookup (allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true, verbatim: true }, (err, addresses) => {
      if (err !== null) { callback(err, '', 0); return }
      const list = addresses
      if (!allowPrivate) {
        const bad = list.find((a) => isNonPublicAddress(a.address))
        if (bad !== undefined) {
          callback(new AddressRefused(`${hostname} resolves to a private or loopback address (${bad.address})`), '', 0)
          return
        }
      }
      if (list.length === 0) { callback(Object.assign(new Error(`${hostname} did not resolve`), { code: 'ENOTFOUND' }), '', 0); return }
      if (options.all === true) (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, list)
      else callback(null, list[0].address, list[0].family)
    })
  }
}
