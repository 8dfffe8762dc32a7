import ipaddr from 'ipaddr.js';
import { cidr, inRange, parseIp, type IpAddress } from '../net/ip-address.js';

/**
 * The addresses a webhook may never reach: everything that is not the public internet (development
 * also allows loopback, src/net/loopback.ts; MAILROOM_WEBHOOK_ALLOW_PRIVATE=true, all of them).
 * ipaddr.js reads the addresses (src/net/ip-address.ts); the ranges are ours, listed here.
 * IPv6 forms that carry an IPv4 address (mapped, translated, NAT64, 6to4, Teredo) are judged by the
 * IPv4 address they carry, so `::ffff:127.0.0.1` or `2002:7f00:1::` cannot sneak loopback through.
 */

const V4_BLOCKED: readonly (readonly [string, number])[] = [
  ['0.0.0.0', 8], // "this network", unspecified
  ['10.0.0.0', 8], // private (RFC 1918)
  ['100.64.0.0', 10], // CGNAT (RFC 6598); includes Alibaba's metadata 100.100.100.200
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local; includes the cloud metadata 169.254.169.254
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments (RFC 6890)
  ['192.0.2.0', 24], // documentation TEST-NET-1
  ['192.88.99.0', 24], // 6to4 relay anycast (deprecated)
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation TEST-NET-2
  ['203.0.113.0', 24], // documentation TEST-NET-3
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, and 255.255.255.255 broadcast
];

const V6_BLOCKED: readonly (readonly [string, number])[] = [
  ['::', 96], // unspecified ::, loopback ::1 and the deprecated IPv4-compatible ::a.b.c.d
  ['64:ff9b:1::', 48], // local-use NAT64 (RFC 8215): whatever is behind it is local
  ['100::', 64], // discard-only
  ['2001:db8::', 32], // documentation
  ['fc00::', 7], // unique local; includes AWS's metadata fd00:ec2::254
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
];

const v4Ranges = V4_BLOCKED.map(([net, prefix]) => cidr(`${net}/${prefix}`));
const v6Ranges = V6_BLOCKED.map(([net, prefix]) => cidr(`${net}/${prefix}`));
const blockedV4 = (ip: IpAddress): boolean => v4Ranges.some((range) => inRange(ip, range));

/** The IPv4 address at `offset` of 16 bytes, each byte XOR `xor` (Teredo inverts its client's). */
function v4At(bytes: readonly number[], offset: number, xor = 0): IpAddress {
  return new ipaddr.IPv4(bytes.slice(offset, offset + 4).map((b) => b ^ xor));
}

function startsWith(bytes: readonly number[], prefix: readonly number[]): boolean {
  return prefix.every((b, i) => bytes[i] === b);
}

/** The IPv4 addresses an IPv6 address carries, when it is one of the forms that route to them. */
function embeddedIPv4(bytes: readonly number[]): IpAddress[] {
  const zeros = (n: number): number[] => new Array<number>(n).fill(0);
  // ::ffff:a.b.c.d (IPv4-mapped) and ::ffff:0:a.b.c.d (IPv4-translated, RFC 2765)
  if (startsWith(bytes, [...zeros(10), 0xff, 0xff]) || startsWith(bytes, [...zeros(8), 0xff, 0xff, 0, 0])) {
    return [v4At(bytes, 12)];
  }
  // 64:ff9b::a.b.c.d, the well-known NAT64 prefix (RFC 6052)
  if (startsWith(bytes, [0, 0x64, 0xff, 0x9b, ...zeros(8)])) return [v4At(bytes, 12)];
  // 2002:AABB:CCDD::/48, 6to4: the site's IPv4 in bytes 2–5
  if (startsWith(bytes, [0x20, 0x02])) return [v4At(bytes, 2)];
  // 2001:0::/32, Teredo: the server's IPv4 in bytes 4–7, the client's inverted in bytes 12–15
  if (startsWith(bytes, [0x20, 0x01, 0, 0])) return [v4At(bytes, 4), v4At(bytes, 12, 0xff)];
  return [];
}

/**
 * True for loopback, private, link-local (metadata), unspecified, CGNAT, multicast, reserved and
 * documentation addresses, IPv4 or IPv6 (with the IPv4 forms above). Not an IP address in a form
 * a socket takes (parseIp): true (fail closed).
 */
export function isBlockedAddress(text: string): boolean {
  const ip = parseIp(text);
  if (ip === null) return true;
  if (ip.kind() === 'ipv4') return blockedV4(ip);
  if (embeddedIPv4(ip.toByteArray()).some(blockedV4)) return true;
  return v6Ranges.some((range) => inRange(ip, range));
}
