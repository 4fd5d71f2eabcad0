import { lookup as dnsLookup, type LookupAddress } from 'node:dns'
import { BlockList, isIP, type LookupFunction } from 'node:net'

// Webhook targets must be public addresses unless ALLOW_PRIVATE_URLS is set: a webhook is a request the
// service makes on a user's behalf, and must not become a way to reach the host's own or its network's
// services. Kept on its own so it can later be pointed at the shared guard of remote media fetching.

const NON_PUBLIC = new BlockList()
for (const [net, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.88.99.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24],
  ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4]
] as const) NON_PUBLIC.addSubnet(net, prefix, 'ipv4')
for (const [net, prefix] of [
  ['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8], ['2001:db8::', 32], ['100::', 64],
  // NAT64, 6to4, Teredo and IPv4-compatible forms can carry a private IPv4 address inside
  ['64:ff9b::', 96], ['64:ff9b:1::', 48], ['2002::', 16], ['2001::', 32], ['::', 96]
] as const) NON_PUBLIC.addSubnet(net, prefix, 'ipv6')

/** True when `address` (an IP literal) is loopback, private, link-local, reserved or multicast. */
export function isNonPublicAddress (address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, '')
  const family = isIP(bare)
  if (family === 0) return true
  // IPv4-mapped IPv6 (::ffff:a.b.c.d) is checked against the IPv4 rules by BlockList itself
  return NON_PUBLIC.check(bare, family === 6 ? 'ipv6' : 'ipv4')
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
