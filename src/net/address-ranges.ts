import { isIP } from 'node:net'

// Which addresses the server may not reach unless ALLOW_PRIVATE_URLS is set: everything that is not an
// ordinary public unicast address. Written here rather than with net.BlockList because the refusal names
// the range that matched ("link-local", "private (10/8)"), and because IPv6 forms that carry an IPv4
// address (mapped, NAT64, 6to4, compatible) are judged by the IPv4 address they reach.

type Range = [prefix: bigint, bits: number, name: string]

const v4 = (a: string, bits: number, name: string): Range => [ipv4ToInt(a), bits, name]

// Everything that is not an ordinary public unicast address.
const V4_RANGES: Range[] = [
  v4('0.0.0.0', 8, 'unspecified ("this network")'),
  v4('10.0.0.0', 8, 'private (10/8)'),
  v4('100.64.0.0', 10, 'shared (carrier-grade NAT)'),
  v4('127.0.0.0', 8, 'loopback'),
  v4('169.254.0.0', 16, 'link-local'),
  v4('172.16.0.0', 12, 'private (172.16/12)'),
  v4('192.0.0.0', 24, 'IETF protocol assignment'),
  v4('192.0.2.0', 24, 'documentation'),
  v4('192.88.99.0', 24, '6to4 relay'),
  v4('192.168.0.0', 16, 'private (192.168/16)'),
  v4('198.18.0.0', 15, 'benchmarking'),
  v4('198.51.100.0', 24, 'documentation'),
  v4('203.0.113.0', 24, 'documentation'),
  v4('224.0.0.0', 4, 'multicast'),
  v4('240.0.0.0', 4, 'reserved')
]

const v6 = (a: string, bits: number, name: string): Range => [ipv6ToBigInt(a), bits, name]

const V6_RANGES: Range[] = [
  v6('::', 128, 'unspecified'),
  v6('::1', 128, 'loopback'),
  v6('100::', 64, 'discard-only'),
  v6('2001:db8::', 32, 'documentation'),
  v6('fc00::', 7, 'unique-local'),
  v6('fe80::', 10, 'link-local'),
  v6('fec0::', 10, 'site-local'),
  v6('ff00::', 8, 'multicast')
]
// IPv6 forms that carry an IPv4 address, which is what they reach: mapped, compatible, NAT64, 6to4.
const MAPPED = ipv6ToBigInt('::ffff:0:0')
const NAT64 = ipv6ToBigInt('64:ff9b::')
const SIX_TO_FOUR = ipv6ToBigInt('2002::')

function inRange (value: bigint, width: number, [prefix, bits]: Range): boolean {
  const shift = BigInt(width - bits)
  return (value >> shift) === (prefix >> shift)
}

function ipv4ToInt (address: string): bigint {
  return address.split('.').reduce((n, part) => (n << 8n) | BigInt(Number(part)), 0n)
}

function ipv6ToBigInt (address: string): bigint {
  let text = address.toLowerCase()
  // a dotted IPv4 tail (::ffff:127.0.0.1) becomes two hextets
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text)
  if (dotted !== null) {
    const n = ipv4ToInt(dotted[1])
    text = text.slice(0, dotted.index) + `${(n >> 16n).toString(16)}:${(n & 0xffffn).toString(16)}`
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined]
  const left = head === '' ? [] : head.split(':')
  const right = tail === undefined || tail === '' ? [] : tail.split(':')
  const groups = tail === undefined ? left : [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right]
  return groups.reduce((n, g) => (n << 16n) | BigInt(Number.parseInt(g === '' ? '0' : g, 16)), 0n)
}

/** What kind of non-public address this is, or null for a public unicast address (IPv4 or IPv6 literal). */
export function nonPublicRange (address: string): string | null {
  const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '')
  const family = isIP(bare)
  if (family === 4) {
    const n = ipv4ToInt(bare)
    if (n === 0xffffffffn) return 'broadcast'
    return V4_RANGES.find((r) => inRange(n, 32, r))?.[2] ?? null
  }
  if (family !== 6) return 'not an IP address'
  const n = ipv6ToBigInt(bare)
  const embedded = (value: bigint, how: string): string | null => {
    const inner = nonPublicRange([24n, 16n, 8n, 0n].map((s) => String((value >> s) & 0xffn)).join('.'))
    return inner === null ? null : `${inner} (${how})`
  }
  if (inRange(n, 128, [MAPPED, 96, ''])) return embedded(n & 0xffffffffn, 'IPv4-mapped')
  if (inRange(n, 128, [NAT64, 96, ''])) return embedded(n & 0xffffffffn, 'NAT64')
  if (inRange(n, 128, [SIX_TO_FOUR, 16, ''])) return embedded((n >> 80n) & 0xffffffffn, '6to4')
  const named = V6_RANGES.find((r) => inRange(n, 128, r))?.[2]
  if (named !== undefined) return named
  // IPv4-compatible (::a.b.c.d, deprecated)
  if (n >> 32n === 0n) return 'IPv4-compatible'
  return null
}
