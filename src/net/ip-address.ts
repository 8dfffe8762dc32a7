import ipaddr from 'ipaddr.js';
import { isIPv4, isIPv6 } from 'node:net';

/**
 * An IP address as a socket would take it, parsed by ipaddr.js; null for anything else.
 * Strict on purpose: only the forms Node's own `isIP` accepts (dotted decimal IPv4; IPv6 with an
 * optional `%zone`, which is dropped). ipaddr.js alone also reads `0177.0.0.1` and `0x7f.1` as
 * 127.0.0.1; where such a spelling reaches a connection, the URL parser has already turned it
 * into dotted decimal, so a bare string in another form is not an address here (fail closed).
 */
export type IpAddress = ipaddr.IPv4 | ipaddr.IPv6;

/**
 * ipaddr.js reads `::a.b.c.d` as the IPv4-mapped `::ffff:a.b.c.d` (its "deprecated transitional"
 * form). A socket takes it as the IPv4-compatible `::a.b.c.d` (RFC 4291 §2.5.5.1), which is not
 * IPv4 at all, and `dns.lookup` prints such an address that way: read as the socket does.
 */
const IPV4_COMPATIBLE = /^::(\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3})$/;

export function parseIp(text: string): IpAddress | null {
  if (isIPv4(text)) return ipaddr.IPv4.parse(text);
  if (!isIPv6(text)) return null;
  const bare = text.replace(/%.*$/, '');
  const compatible = IPV4_COMPATIBLE.exec(bare)?.[1];
  if (compatible !== undefined) {
    const [a = 0, b = 0, c = 0, d = 0] = ipaddr.IPv4.parse(compatible).octets;
    return new ipaddr.IPv6([0, 0, 0, 0, 0, 0, (a << 8) | b, (c << 8) | d]);
  }
  return ipaddr.IPv6.parse(bare);
}

/**
 * A client address as one key per client: an IPv4-mapped IPv6 address (`::ffff:a.b.c.d`, what a
 * dual-stack `::` listener reports for an IPv4 peer) as its IPv4 address, so the same peer is one
 * key whichever listener it reached; anything else as given.
 */
export function unmappedIp(text: string): string {
  const ip = parseIp(text);
  return ip !== null && ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress()
    ? (ip as ipaddr.IPv6).toIPv4Address().toString()
    : text;
}

/** A range, `a.b.c.d/n` or `x::/n`: for tables written in this repository (a typo throws at load). */
export type IpRange = [IpAddress, number];
export const cidr = (text: string): IpRange => ipaddr.parseCIDR(text);

/** Whether the address is in the range; an IPv4 address is never in an IPv6 range, nor the reverse. */
export const inRange = (ip: IpAddress, range: IpRange): boolean => ip.kind() === range[0].kind() && ip.match(range);
