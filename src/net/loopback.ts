import { cidr, inRange, parseIp } from './ip-address.js';

/**
 * Whether a host is this machine's loopback: the one rule wherever plain http or a local
 * receiver is allowed for "the developer's own machine" (webhook URLs in development, provider
 * endpoints, SNS certificate hosts in tests, the CAPTCHA widget's redirect). Give it
 * `URL.hostname`: the WHATWG parser has already lower-cased the name, dropped any user name
 * (`http://localhost@evil.example` is evil.example), and turned every IPv4 spelling into dotted
 * decimal (`http://2130706433/`, `http://0177.0.0.1/`, `http://127.1/` are all 127.0.0.1, and
 * that is where a request to them goes). Loopback is:
 * - `localhost` and any name under it (`api.localhost`): RFC 6761 §6.3 reserves them for
 *   loopback, browsers resolve them so themselves, and nobody can register one. Not `localhost.`:
 *   with a trailing dot a resolver may ask DNS (a caller that refuses such names strips dots first);
 * - 127.0.0.0/8 and ::1;
 * - the IPv4-mapped ::ffff:127.0.0.0/104 (`[::ffff:127.0.0.1]` serializes as `[::ffff:7f00:1]`): a
 *   socket to it is an IPv4 loopback connection.
 * Not loopback: 0.0.0.0 and :: (Linux connects them to this machine, but nobody means them), the
 * IPv4-compatible ::127.0.0.1, NAT64 and 6to4 forms (they route elsewhere), `127.0.0.1.evil.example`
 * (a name), and anything that is neither a name nor an address in the forms above (fail closed).
 * Where a caller allows more or less than this, the difference is in the caller, named.
 */
export function isLoopbackHost(host: string): boolean {
  const name = host.toLowerCase();
  if (LOCALHOST_NAME.test(name)) return true;
  const ip = parseIp(name.startsWith('[') && name.endsWith(']') ? name.slice(1, -1) : name);
  return ip !== null && LOOPBACK_RANGES.some((range) => inRange(ip, range));
}

/** `localhost` and names under it, each label non-empty. */
const LOCALHOST_NAME = /^(?:[^.]+\.)*localhost$/;
const LOOPBACK_RANGES = ['127.0.0.0/8', '::1/128', '::ffff:127.0.0.0/104'].map(cidr);

/**
 * Its pattern form lives apart (no imports) so the provider descriptors, which the UI bundles,
 * take a string and not the address parser.
 */
export { LOOPBACK_HOST_PATTERN } from './loopback-pattern.js';
