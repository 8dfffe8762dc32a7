import { promises as dnsPromises, type LookupAddress, type LookupOptions } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import type { WebhookUrlPolicy } from './types.js';
import { isBlockedAddress } from './blocked-addresses.js';

/**
 * An endpoint URL is request input that becomes a URL this server fetches (SSRF). In production
 * it must be https and reach only public addresses: checked at registration (checkEndpointUrl)
 * and again at every connection (guardedLookup), because a name may resolve differently later
 * (DNS rebinding).
 */

export { isBlockedAddress } from './blocked-addresses.js';

/** Resolves a name to all its A/AAAA records (dns.promises.lookup with all: true by default). */
export type LookupFn = (hostname: string) => Promise<readonly LookupAddress[]>;

export const systemLookup: LookupFn = (hostname) => dnsPromises.lookup(hostname, { all: true, verbatim: true });

/** Browsers' practical limit; longer is more likely abuse than an endpoint. */
const MAX_URL_LENGTH = 2048;

/** Names that are local by definition, whatever DNS says. */
const LOCAL_NAMES = new Set(['localhost', 'localhost.localdomain', 'metadata', 'metadata.google.internal']);

/** Production without MAILROOM_WEBHOOK_ALLOW_PRIVATE=true: https only, public addresses only. */
export function isRestricted(policy: WebhookUrlPolicy): boolean {
  return policy.production && !policy.allowPrivate;
}

/** The host as an address when the URL names one (`[::1]` → `::1`), else null. */
export function ipLiteral(hostname: string): string | null {
  const bare = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  return isIP(bare) === 0 ? null : bare;
}

function isLocalName(hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/\.+$/, '');
  return LOCAL_NAMES.has(name) || name.endsWith('.localhost');
}

/** The parsed URL, or why it is not an acceptable endpoint URL under any policy. */
export function parseEndpointUrl(url: string): URL | string {
  if (url.length > MAX_URL_LENGTH) return `url must be at most ${MAX_URL_LENGTH} characters`;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'url must be an absolute http or https URL';
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') {
    return 'url must be an absolute http or https URL';
  }
  if (parsed.hostname === '') return 'url must name a host';
  if (parsed.username !== '' || parsed.password !== '') {
    return 'url must not contain a user name or password';
  }
  return parsed;
}

/**
 * Null when the URL may be registered; otherwise a sentence saying why not (the 422's message).
 * In production the name is resolved now; every address it has must be public, and a name that
 * does not resolve is refused (it could later point anywhere we have not checked).
 */
export async function checkEndpointUrl(
  url: string,
  policy: WebhookUrlPolicy,
  lookup: LookupFn = systemLookup,
): Promise<string | null> {
  const parsed = parseEndpointUrl(url);
  if (typeof parsed === 'string') return parsed;
  if (!isRestricted(policy)) return null;
  if (parsed.protocol !== 'https:') return 'url must use https in production';
  const literal = ipLiteral(parsed.hostname);
  if (literal !== null) {
    return isBlockedAddress(literal) ? blockedSentence(literal) : null;
  }
  if (isLocalName(parsed.hostname)) {
    return `url host ${parsed.hostname} is local: loopback, private, link-local and metadata hosts are refused in production`;
  }
  let addresses: readonly LookupAddress[];
  try {
    addresses = await lookup(parsed.hostname);
  } catch {
    return `url host ${parsed.hostname} does not resolve`;
  }
  if (addresses.length === 0) return `url host ${parsed.hostname} does not resolve`;
  const blocked = addresses.find((a) => isBlockedAddress(a.address));
  return blocked === undefined ? null : blockedSentence(blocked.address, parsed.hostname);
}

function blockedSentence(address: string, hostname?: string): string {
  const what = hostname === undefined ? `url host ${address}` : `url host ${hostname} resolves to ${address}, which`;
  return `${what} is a blocked address: loopback, private, link-local and metadata addresses are refused in production`;
}

/** The error a refused connection fails with; its message names the address. */
export function blockedAddressError(hostname: string, address: string): NodeJS.ErrnoException {
  const error: NodeJS.ErrnoException = new Error(`blocked address: ${hostname} resolves to ${address}`);
  error.code = 'EBLOCKEDADDRESS';
  return error;
}

/**
 * A `lookup` for net/tls.connect (undici's `connect.lookup`): resolves, then refuses the connection
 * when the policy forbids any resolved address. This runs at every new connection, after the
 * registration check, so a name rebound to 127.0.0.1 since is caught here. Refusing when ANY
 * address is blocked (not just skipping it) keeps the rule the same as at registration.
 */
export function guardedLookup(policy: WebhookUrlPolicy, lookup: LookupFn = systemLookup): LookupFunction {
  const restricted = isRestricted(policy);
  return (hostname: string, options: LookupOptions, callback) => {
    lookup(hostname).then(
      (found) => {
        const wanted = options.family === 4 || options.family === 6 ? options.family : 0;
        const addresses = found.filter((a) => wanted === 0 || a.family === wanted);
        const first = addresses[0];
        if (first === undefined) {
          const error: NodeJS.ErrnoException = new Error(`getaddrinfo ENOTFOUND ${hostname}`);
          error.code = 'ENOTFOUND';
          callback(error, '', undefined);
          return;
        }
        const blocked = restricted ? addresses.find((a) => isBlockedAddress(a.address)) : undefined;
        if (blocked !== undefined) {
          callback(blockedAddressError(hostname, blocked.address), '', undefined);
        } else if (options.all === true) {
          callback(null, addresses.map((a) => ({ address: a.address, family: a.family })));
        } else {
          callback(null, first.address, first.family);
        }
      },
      (error: unknown) => {
        const failure: NodeJS.ErrnoException = error instanceof Error ? error : new Error(`getaddrinfo failed for ${hostname}`);
        callback(failure, '', undefined);
      },
    );
  };
}
