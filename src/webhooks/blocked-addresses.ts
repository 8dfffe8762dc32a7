import { BlockList, isIPv4, isIPv6 } from 'node:net';

/**
 * The addresses a webhook may never reach: everything that is not the public internet (development
 * also allows loopback, isLoopbackAddress below; MAILROOM_WEBHOOK_ALLOW_PRIVATE=true, all of them).
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

const v4List = new BlockList();
for (const [net, prefix] of V4_BLOCKED) v4List.addSubnet(net, prefix, 'ipv4');
const v6List = new BlockList();
for (const [net, prefix] of V6_BLOCKED) v6List.addSubnet(net, prefix, 'ipv6');

/** 16 bytes of an IPv6 text (any valid form: `::`, an IPv4 tail, a `%zone`), or null. */
export function ipv6Bytes(text: string): Uint8Array | null {
  const ip = text.replace(/%.*$/, '');
  if (!isIPv6(ip)) return null;
  let head = ip;
  const tail: number[] = [];
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(ip);
  if (dotted?.[1] !== undefined) {
    tail.push(...dotted[1].split('.').map(Number));
    head = ip.slice(0, -dotted[1].length);
    if (head.endsWith(':') && !head.endsWith('::')) head = head.slice(0, -1);
  }
  const [left = '', right] = head.split('::');
  const groups = (s: string): number[] => (s === '' ? [] : s.split(':').map((g) => parseInt(g, 16)));
  const leftGroups = groups(left);
  const rightGroups = right === undefined ? [] : groups(right);
  const missing = 8 - tail.length / 2 - leftGroups.length - rightGroups.length;
  const all = [...leftGroups, ...new Array<number>(right === undefined ? 0 : missing).fill(0), ...rightGroups];
  const bytes = new Uint8Array(16);
  all.forEach((g, i) => {
    bytes[i * 2] = g >> 8;
    bytes[i * 2 + 1] = g & 0xff;
  });
  tail.forEach((b, i) => {
    bytes[12 + i] = b;
  });
  return bytes;
}

function v4At(bytes: Uint8Array, offset: number, xor = 0): string {
  return Array.from(bytes.subarray(offset, offset + 4), (b) => String(b ^ xor)).join('.');
}

function startsWith(bytes: Uint8Array, prefix: readonly number[]): boolean {
  return prefix.every((b, i) => bytes[i] === b);
}

/** The IPv4 address an IPv6 address carries, when it is one of the forms that route to it. */
function embeddedIPv4(bytes: Uint8Array): string[] {
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
 * documentation addresses, IPv4 or IPv6 (with the IPv4 forms above). Not an IP address: true
 * (fail closed).
 */
export function isBlockedAddress(ip: string): boolean {
  if (isIPv4(ip)) return v4List.check(ip, 'ipv4');
  const bytes = ipv6Bytes(ip);
  if (bytes === null) return true;
  const canonical = Array.from({ length: 8 }, (_, i) => (((bytes[i * 2] ?? 0) << 8) | (bytes[i * 2 + 1] ?? 0)).toString(16)).join(':');
  if (embeddedIPv4(bytes).some((v4) => v4List.check(v4, 'ipv4'))) return true;
  return v6List.check(canonical, 'ipv6');
}

/**
 * True for this machine's loopback: 127.0.0.0/8, ::1 and the IPv4-mapped ::ffff:127.x.y.z (a
 * socket to it is an IPv4 loopback connection). Development lets webhooks reach these and no
 * other blocked address; the unspecified 0.0.0.0 also reaches this machine on Linux but is not
 * what anyone registers, so it stays refused.
 */
export function isLoopbackAddress(ip: string): boolean {
  if (isIPv4(ip)) return ip.split('.')[0] === '127';
  const bytes = ipv6Bytes(ip);
  if (bytes === null) return false;
  const zeros = (n: number): number[] => new Array<number>(n).fill(0);
  if (startsWith(bytes, [...zeros(15), 1])) return true;
  return startsWith(bytes, [...zeros(10), 0xff, 0xff, 127]);
}
