import { domainToASCII } from 'node:url';

/**
 * The one rule for internationalized (IDN) addresses and domains (issue 25): a domain is
 * compared and stored in its A-label form, lower-cased (`exämple.com` → `xn--exmple-cua.com`,
 * UTS 46 through node:url's domainToASCII, the same form a URL's host takes, so link hosts and
 * link domains meet). A local part is kept as UTF-8, NFC-normalized and lower-cased: `zoë@…`
 * needs SMTPUTF8 to be delivered, which nodemailer asks for when the relay offers it.
 * Suppressions, the block list, recipient checks at send and at delivery, recipient states and
 * the history's recipient filter all key addresses with `canonicalAddress`.
 */

/** A DNS label in ASCII: letters, digits and hyphens, 1..63, no hyphen at either end. */
const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
/** Any UTF-16 code unit above 0x7f: the complement of ASCII (no control character to spell in the class). */
const NON_ASCII = /[\u0080-\uffff]/;
const NUMERIC = /^[0-9]+$/;

/**
 * `domain` as a host name in A-label form, lower-cased; undefined unless it is one: two labels or
 * more, each 1..63 letters, digits and hyphens once in ASCII, at most 253 characters, the last
 * label not all digits (so `192.0.2.1` is refused, as is `localhost`). No trailing dot, port,
 * path, scheme, `*` or `%`: domainToASCII alone would decode `ex%41mple.com` to `example.com`
 * and read `0x7f.1` as an IPv4 address, so those never reach it.
 */
export function asciiDomain(domain: string): string | undefined {
  if (domain === '' || domain.length > 1000 || /[%*\s/:@?#[\]\\]/.test(domain)) return undefined;
  const ascii = NON_ASCII.test(domain) ? domainToASCII(domain) : domain.toLowerCase();
  if (ascii === '' || ascii.length > 253) return undefined;
  const labels = ascii.split('.');
  if (labels.length < 2 || NUMERIC.test(labels[labels.length - 1] ?? '')) return undefined;
  // A label that claims to be an A-label must decode (domainToASCII answers '' when it does not).
  if (!labels.every((l) => LABEL.test(l)) || (ascii.includes('xn--') && domainToASCII(ascii) === '')) return undefined;
  return ascii;
}

/**
 * The key two spellings of one address share: `ZOË@Exämple.com`, `zoë@xn--exmple-cua.com` and
 * `zoe\u0308@EXÄMPLE.COM` are all `zoë@xn--exmple-cua.com`. Also keys the block list's other
 * values: `@exämple.com` (a whole domain) is `@xn--exmple-cua.com`; text without `@`, or whose
 * domain is no host name, is trimmed and lower-cased as before. ASCII input takes no IDN step.
 */
export function canonicalAddress(value: string): string {
  const v = value.trim();
  if (!NON_ASCII.test(v)) return v.toLowerCase();
  const at = v.lastIndexOf('@');
  if (at === -1) return v.normalize('NFC').toLowerCase();
  const local = v.slice(0, at).normalize('NFC').toLowerCase();
  const domain = v.slice(at + 1);
  return `${local}@${asciiDomain(domain) ?? domain.normalize('NFC').toLowerCase()}`;
}

/**
 * The address with its domain in A-label form and the local part as written: what nodemailer
 * gives a relay, envelope and headers, for an ASCII local part (`ann@exämple.com` → `ann@xn--exmple-cua.com`).
 */
export function asciiDomainAddress(address: string): string {
  const at = address.lastIndexOf('@');
  if (at === -1 || !NON_ASCII.test(address.slice(at + 1))) return address;
  const domain = asciiDomain(address.slice(at + 1));
  return domain === undefined ? address : `${address.slice(0, at)}@${domain}`;
}
