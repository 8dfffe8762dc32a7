import { asciiDomain } from './addresses.js';

/**
 * A link domain as it is stored and matched (issue 25: any text was stored before): a host name
 * (src/domain/addresses.ts asciiDomain) in its lower-cased A-label form, as a URL's host is
 * (`exämple.com` → `xn--exmple-cua.com`). An entry covers the domain and every subdomain, so
 * `*.example.com` is accepted as another spelling of `example.com`, and one trailing dot (the
 * fully qualified form) is dropped. Undefined for anything else: a scheme, port, path, user,
 * IP address, a single label, `*` anywhere but in front.
 */
export function linkDomain(entry: string): string | undefined {
  let d = entry.trim();
  if (d.startsWith('*.')) d = d.slice(2);
  if (d.endsWith('.')) d = d.slice(0, -1);
  return asciiDomain(d);
}

/**
 * Entries of a `link_domains` list that are no domain name, as `link_domains.<i>` field problems.
 * An entry equal to one in `stored` (written before the rule) passes: a PATCH of another setting
 * sends the stored list back whole, and must not be refused for what the operator did not touch.
 */
export function linkDomainProblems(
  entries: readonly string[] | undefined,
  stored: readonly string[] = [],
): Array<{ field: string; message: string }> {
  return (entries ?? []).flatMap((entry, i) =>
    linkDomain(entry) !== undefined || stored.includes(entry.trim().toLowerCase())
      ? []
      : [
          {
            field: `link_domains.${i}`,
            message:
              `is ${JSON.stringify(entry.slice(0, 100))}, not a domain name: write example.com or ` +
              `*.example.com (an IDN as exämple.com or its xn-- form), without scheme, port or path`,
          },
        ],
  );
}

/**
 * The list as stored: each entry by linkDomain, without repeats. An entry that is none (only a
 * caller that skipped linkDomainProblems has one) is kept lower-cased, as before the rule.
 */
export function linkDomainList(entries: readonly string[]): string[] {
  return [...new Set(entries.map((e) => linkDomain(e) ?? e.trim().toLowerCase()))];
}
