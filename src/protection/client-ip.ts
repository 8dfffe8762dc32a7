import net from 'node:net';

/** Expands an IPv6 address into its 8 groups; undefined when it is not one. */
function ipv6Groups(address: string): number[] | undefined {
  let a = address;
  let tail: number[] = [];
  // A dotted IPv4 tail (`::ffff:192.0.2.1`, `64:ff9b::192.0.2.1`) is the last two groups.
  const dotted = /^(.*:)(\d{1,3}(?:\.\d{1,3}){3})$/.exec(a);
  if (dotted !== null) {
    const octets = (dotted[2] ?? '').split('.').map(Number);
    if (octets.some((o) => o > 255)) return undefined;
    const [o1 = 0, o2 = 0, o3 = 0, o4 = 0] = octets;
    tail = [(o1 << 8) | o2, (o3 << 8) | o4];
    a = `${dotted[1] ?? ''}`;
    if (a.endsWith(':') && !a.endsWith('::')) a = a.slice(0, -1);
  }
  const halves = a.split('::');
  if (halves.length > 2) return undefined;
  const parse = (s: string) =>
    s === '' ? [] : s.split(':').map((g) => (/^[0-9a-f]{1,4}$/i.test(g) ? parseInt(g, 16) : Number.NaN));
  const head = parse(halves[0] ?? '');
  const rest = halves.length === 2 ? parse(halves[1] ?? '') : [];
  const known = head.length + rest.length + tail.length;
  if (halves.length === 1 && known !== 8) return undefined;
  if (halves.length === 2 && known > 7) return undefined;
  const groups = [...head, ...Array.from({ length: 8 - known }, () => 0), ...rest, ...tail];
  return groups.some((g) => Number.isNaN(g)) ? undefined : groups;
}

/**
 * The unit the per-IP limit counts: an IPv4 address as is, an IPv6 address by its /64 network
 * (one subscriber usually holds a whole /64, so counting single addresses would let one client
 * rotate through 2^64 of them). IPv4-mapped IPv6 (`::ffff:192.0.2.1`) counts as the IPv4 address.
 */
export function ipBucket(ip: string): string {
  const address = ip
    .trim()
    .replace(/^\[|\]$/g, '')
    .replace(/%.*$/, '');
  if (net.isIPv4(address)) return address;
  if (!net.isIPv6(address)) return address.toLowerCase();
  const groups = ipv6Groups(address);
  if (groups === undefined) return address.toLowerCase();
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    const [hi = 0, lo = 0] = groups.slice(6);
    return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  }
  return `${groups
    .slice(0, 4)
    .map((g) => g.toString(16))
    .join(':')}::/64`;
}
