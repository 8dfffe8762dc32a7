import { Parser } from 'htmlparser2';
import { linkDomain } from '../domain/link-domains.js';
import { ApiError } from '../errors/api-error.js';

/** Attributes whose value is one URL. */
const URL_ATTRIBUTES = new Set([
  'href',
  'src',
  'action',
  'formaction',
  'background',
  'poster',
  'cite',
  'longdesc',
  'data',
  'lowsrc',
  'dynsrc',
  'manifest',
  'codebase',
  'xlink:href',
  'icon',
]);
/** Attributes whose value lists URLs separated by white space. */
const URL_LIST_ATTRIBUTES = new Set(['ping', 'archive']);
/** `srcset`-style attributes: comma-separated candidates of "URL descriptor". */
const SRCSET_ATTRIBUTES = new Set(['srcset', 'imagesrcset']);

/** Bare URLs in text, as mail clients turn them into links: `http(s)://…`, `//…` is not, `www.…` is. */
const BARE_URL = /\b(?:https?:\/\/|www\.)[^\s<>"'`]+/gi;
/** `url(…)` in CSS (style attributes and `<style>`): images load from there. */
const CSS_URL = /url\(\s*(['"]?)([^'")]+?)\1\s*\)/gi;
/** `<meta http-equiv="refresh" content="0; url=…">`. */
const REFRESH_URL = /url\s*=\s*['"]?([^'"\s;]+)/i;

// Relative URLs resolve against this and are then not links to anywhere.
const SENTINEL_BASE = 'https://relative.mailroom.invalid/';
const SENTINEL_HOST = 'relative.mailroom.invalid';

/** The host a URL points to, lower-cased and without a trailing dot; undefined for relative, mailto:, cid: …. */
export function urlHost(raw: string): string | undefined {
  const value = raw.trim();
  if (value === '') return undefined;
  let url: URL;
  try {
    url = new URL(value.toLowerCase().startsWith('www.') ? `http://${value}` : value, SENTINEL_BASE);
  } catch {
    return undefined;
  }
  if (!['http:', 'https:', 'ftp:', 'ws:', 'wss:'].includes(url.protocol)) return undefined;
  const host = url.hostname.toLowerCase().replace(/\.$/, '');
  return host === '' || host === SENTINEL_HOST ? undefined : host;
}

function textUrls(text: string, out: Set<string>): void {
  for (const m of text.matchAll(BARE_URL)) {
    // Trailing punctuation belongs to the sentence, not to the URL.
    const host = urlHost(m[0].replace(/[.,;:!?)\]}]+$/, ''));
    if (host !== undefined) out.add(host);
  }
}

function cssUrls(css: string, out: Set<string>): void {
  for (const m of css.matchAll(CSS_URL)) {
    const host = urlHost(m[2] ?? '');
    if (host !== undefined) out.add(host);
  }
}

function htmlUrls(html: string, out: Set<string>, depth: number): void {
  const add = (raw: string | undefined) => {
    if (raw === undefined) return;
    const host = urlHost(raw);
    if (host !== undefined) out.add(host);
  };
  let inStyle = 0;
  const parser = new Parser(
    {
      onopentag(name, attribs) {
        if (name === 'style') inStyle++;
        for (const [attr, value] of Object.entries(attribs)) {
          const a = attr.toLowerCase();
          if (URL_ATTRIBUTES.has(a)) add(value);
          else if (URL_LIST_ATTRIBUTES.has(a)) for (const part of value.split(/[\s,]+/)) add(part);
          else if (SRCSET_ATTRIBUTES.has(a)) for (const candidate of value.split(',')) add(candidate.trim().split(/\s+/)[0]);
          else if (a === 'style') cssUrls(value, out);
        }
        if (name === 'meta' && (attribs['http-equiv'] ?? '').toLowerCase() === 'refresh')
          add(REFRESH_URL.exec(attribs.content ?? '')?.[1]);
      },
      onclosetag(name) {
        if (name === 'style' && inStyle > 0) inStyle--;
      },
      ontext(text) {
        if (inStyle > 0) cssUrls(text, out);
        textUrls(text, out);
      },
      oncomment(data) {
        // Outlook renders the content of conditional comments (`<!--[if mso]>…<![endif]-->`).
        if (depth < 3 && /^\s*\[if\b/i.test(data))
          htmlUrls(data.replace(/^\s*\[if[^\]]*\]>?/i, '').replace(/<!\[endif\]\s*$/i, ''), out, depth + 1);
      },
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
  );
  parser.write(html);
  parser.end();
}

/**
 * Every host the rendered email links to or loads from: in the HTML part (parsed with
 * htmlparser2, entities decoded) the URL attributes (`href`, `src`, `action`, `srcset`, …),
 * CSS `url(…)`, meta refresh and bare `http(s)://` / `www.` URLs in text nodes; in the text
 * part its bare URLs. Sorted, without duplicates.
 */
export function linkHosts(email: { html: string; text: string }): string[] {
  const out = new Set<string>();
  htmlUrls(email.html, out, 0);
  textUrls(email.text, out);
  return [...out].sort();
}

/**
 * The domain an entry stored before the rule covers: `https://example.com/x` or `example.com:80`
 * still mean `example.com`, so an upgrade never turns a working allowlist into refusals.
 */
function storedLinkDomain(entry: string): string {
  const checked = linkDomain(entry);
  if (checked !== undefined) return checked;
  let d = entry.trim().toLowerCase();
  if (d.includes('://')) d = urlHost(d) ?? d;
  return d
    .replace(/^\*?\./, '')
    .replace(/\.$/, '')
    .replace(/:\d+$/, '');
}

/** A domain allows itself and every subdomain. */
export function hostAllowed(host: string, domains: readonly string[]): boolean {
  return domains.some((entry) => {
    const d = storedLinkDomain(entry);
    return d !== '' && (host === d || host.endsWith(`.${d}`));
  });
}

/**
 * 403 `link_not_allowed` when the email links outside `domains`; `details.hosts` names the
 * offending hosts only (never full URLs, which may carry a victim's data).
 */
export function checkLinks(email: { html: string; text: string }, domains: readonly string[]): void {
  const hosts = linkHosts(email).filter((h) => !hostAllowed(h, domains));
  if (hosts.length > 0) {
    throw new ApiError('link_not_allowed', {
      message: `The email links to ${hosts.length === 1 ? 'a domain' : 'domains'} outside the organization's link domains.`,
      details: { hosts },
    });
  }
}
