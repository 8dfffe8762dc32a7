import { promises as dnsPromises, type LookupAddress, type LookupOptions } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { isLoopbackHost } from '../net/loopback.js';
import type { WebhookUrlPolicy } from './types.js';
import { isBlockedAddress } from './blocked-addresses.js';

/**
 * An endpoint URL is request input that becomes a URL this server fetches (SSRF). In production
 * it must be https and reach only public addresses; in development http and loopback are allowed
 * too, and nothing else: a private, link-local or metadata address (169.254.169.254 in any
 * spelling) is refused in every mode unless MAILROOM_WEBHOOK_ALLOW_PRIVATE=true. Checked at
 * registration (endpointUrlRefusal) and again at every connection (guardedLookup), because a
 * name may resolve differently later (DNS rebinding).
 */

export { isBlockedAddress } from './blocked-addresses.js';

/** Resolves a name to all its A/AAAA records (dns.promises.lookup with all: true by default). */
export type LookupFn = (hostname: string) => Promise<readonly LookupAddress[]>;

export const systemLookup: LookupFn = (hostname) => dnsPromises.lookup(hostname, { all: true, verbatim: true });

/** Browsers' practical limit; longer is more likely abuse than an endpoint. */
const MAX_URL_LENGTH = 2048;

/** Cloud metadata services' names: link-local by definition (GCP, AWS). */
const METADATA_NAMES = new Set(['metadata', 'metadata.google.internal', 'instance-data', 'instance-data.ec2.internal']);

/**
 * Which addresses a connection may reach: `any`; `public` only (no loopback, private, link-local
 * or metadata address); `private` only; or `public-or-loopback` (development: a receiver on this
 * machine, never the LAN, link-local or the metadata service).
 */
export type AddressRule = 'any' | 'public' | 'private' | 'public-or-loopback';

/**
 * The rule for a URL's scheme under the policy. Production: https to public addresses only.
 * Development: http or https to public and loopback addresses. MAILROOM_WEBHOOK_ALLOW_PRIVATE=true
 * opens private, loopback and link-local addresses: in development to anything; in production
 * not plaintext across the internet (https may go anywhere, http only to those).
 */
export function addressRule(policy: WebhookUrlPolicy, protocol: string): AddressRule {
  if (policy.allowPrivate) {
    if (!policy.production) return 'any';
    return protocol === 'https:' ? 'any' : 'private';
  }
  return policy.production ? 'public' : 'public-or-loopback';
}

function allowedBy(rule: AddressRule, address: string): boolean {
  switch (rule) {
    case 'any':
      return true;
    case 'public':
      return !isBlockedAddress(address);
    case 'private':
      return isBlockedAddress(address);
    case 'public-or-loopback':
      return !isBlockedAddress(address) || isLoopbackHost(address);
  }
}

/** The first address the rule forbids, or undefined when every one is allowed. */
export function forbiddenAddress(rule: AddressRule, addresses: readonly string[]): string | undefined {
  return addresses.find((a) => !allowedBy(rule, a));
}

const HTTPS_IN_PRODUCTION = 'url must use https in production';

/** The host as an address when the URL names one (`[::1]` → `::1`), else null. */
export function ipLiteral(hostname: string): string | null {
  const bare = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  return isIP(bare) === 0 ? null : bare;
}

/**
 * What a name is by definition, before any DNS: loopback (isLoopbackHost), a metadata service, or
 * nothing known. Unlike isLoopbackHost, trailing dots are dropped first: here the name decides a
 * refusal in production as much as an allowance in development, and `localhost.` is the same
 * name to DNS (an allowance is safe either way: every connection checks the addresses).
 */
function localName(hostname: string): 'loopback' | 'metadata' | null {
  const name = hostname.toLowerCase().replace(/\.+$/, '');
  if (isLoopbackHost(name)) return 'loopback';
  return METADATA_NAMES.has(name) ? 'metadata' : null;
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

/** Why a URL may not be registered. */
export interface UrlRefusal {
  reason: string;
  /**
   * The name did not resolve now. The admin API and the CLI refuse it (it could later point
   * anywhere unchecked); the config file accepts it with a warning, so a DNS blip cannot stop a
   * start: the connection-time guard still checks every address it gets.
   */
  unresolved: boolean;
}

/**
 * Null when the URL may be registered; otherwise a sentence saying why not (the 400's message).
 * The name is resolved now and every address it has must pass the rule (addressRule). In
 * production a name that does not resolve is refused, marked `unresolved`; in development it
 * is accepted (a receiver that is not up yet), since every connection is checked anyway.
 */
export async function endpointUrlRefusal(
  url: string,
  policy: WebhookUrlPolicy,
  lookup: LookupFn = systemLookup,
): Promise<UrlRefusal | null> {
  const refuse = (reason: string, unresolved = false): UrlRefusal => ({ reason, unresolved });
  const parsed = parseEndpointUrl(url);
  if (typeof parsed === 'string') return refuse(parsed);
  const rule = addressRule(policy, parsed.protocol);
  if (rule === 'any') return null;
  if (rule === 'public' && parsed.protocol !== 'https:') return refuse(HTTPS_IN_PRODUCTION);
  const literal = ipLiteral(parsed.hostname);
  if (literal !== null) {
    const bad = forbiddenAddress(rule, [literal]);
    return bad === undefined ? null : refuse(forbiddenSentence(rule, bad));
  }
  const local = localName(parsed.hostname);
  if (local !== null) {
    // Local by definition: allowed where http goes (private), and loopback in development.
    return rule === 'private' || (rule === 'public-or-loopback' && local === 'loopback')
      ? null
      : refuse(`url host ${parsed.hostname} is local: ${refusedList(rule)}`);
  }
  let addresses: readonly LookupAddress[];
  try {
    addresses = await lookup(parsed.hostname);
  } catch {
    addresses = [];
  }
  if (addresses.length === 0) {
    return rule === 'public-or-loopback' ? null : refuse(`url host ${parsed.hostname} does not resolve`, true);
  }
  const bad = forbiddenAddress(
    rule,
    addresses.map((a) => a.address),
  );
  return bad === undefined ? null : refuse(forbiddenSentence(rule, bad, parsed.hostname));
}

/** What the rule refuses, for the 400's message (public-or-loopback is development's). */
function refusedList(rule: AddressRule): string {
  return rule === 'public-or-loopback'
    ? 'private, link-local and metadata addresses are refused in development too ' +
        '(loopback is allowed; MAILROOM_WEBHOOK_ALLOW_PRIVATE=true allows the rest)'
    : 'loopback, private, link-local and metadata addresses are refused in production';
}

/** endpointUrlRefusal's sentence alone: null when the URL may be registered. */
export async function checkEndpointUrl(
  url: string,
  policy: WebhookUrlPolicy,
  lookup: LookupFn = systemLookup,
): Promise<string | null> {
  return (await endpointUrlRefusal(url, policy, lookup))?.reason ?? null;
}

function forbiddenSentence(rule: AddressRule, address: string, hostname?: string): string {
  if (rule === 'private') {
    const what =
      hostname === undefined ? `${address} is a public address` : `${hostname} resolves to the public address ${address}`;
    return (
      `${HTTPS_IN_PRODUCTION}: ${what} ` +
      `(MAILROOM_WEBHOOK_ALLOW_PRIVATE=true allows http to private, loopback and link-local addresses only)`
    );
  }
  const what = hostname === undefined ? `url host ${address}` : `url host ${hostname} resolves to ${address}, which`;
  return `${what} is a blocked address: ${refusedList(rule)}`;
}

/** The error a refused connection fails with; its message names the address. */
export function blockedAddressError(hostname: string, address: string, rule: AddressRule = 'public'): NodeJS.ErrnoException {
  const error: NodeJS.ErrnoException = new Error(
    rule === 'private'
      ? `public address over http: ${hostname} resolves to ${address} (http goes only to private addresses)`
      : `blocked address: ${hostname} resolves to ${address}`,
  );
  error.code = 'EBLOCKEDADDRESS';
  return error;
}

/**
 * A `lookup` for net/tls.connect (undici's `connect.lookup`): resolves, then refuses the connection
 * when the rule for the policy and the scheme (addressRule) forbids any resolved address. This runs at every new connection,
 * after the registration check, so a name rebound to 127.0.0.1 since is caught here. Refusing when ANY
 * address is blocked (not just skipping it) keeps the rule the same as at registration.
 */
export function guardedLookup(
  policy: WebhookUrlPolicy,
  lookup: LookupFn = systemLookup,
  protocol: 'http:' | 'https:' = 'https:',
): LookupFunction {
  const rule = addressRule(policy, protocol);
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
        const blocked = forbiddenAddress(
          rule,
          addresses.map((a) => a.address),
        );
        if (blocked !== undefined) {
          callback(blockedAddressError(hostname, blocked, rule), '', undefined);
        } else if (options.all === true) {
          callback(
            null,
            addresses.map((a) => ({ address: a.address, family: a.family })),
          );
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
