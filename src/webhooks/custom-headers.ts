import { SECRET_MASK } from '../providers/schema.js';

/**
 * Custom request headers of a webhook endpoint (issue 29): what an operator adds so a receiver
 * behind basic auth or a gateway token accepts mailroom's requests. The values are secrets: they
 * are sent, and never shown again (reads and the delivery log show SECRET_MASK, as services'
 * secrets read). The checks here are shared by the admin API, the config file and the CLI.
 */

export interface CustomHeader {
  name: string;
  value: string;
}

/** Ten headers are enough for auth and a routing key or two; more is a sign of a mistake. */
export const MAX_CUSTOM_HEADERS = 10;
/** Names: RFC 9110 tokens of at most 64 characters (no real header is longer). */
export const MAX_HEADER_NAME = 64;
/** Values: 1 KiB, room for a bearer JWT; receivers commonly cap a header line at 8 KiB. */
export const MAX_HEADER_VALUE = 1024;

/** RFC 9110 §5.6.2 `token`: the characters a field name may have. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** A control character other than HTAB (0x09): CR, LF and NUL would split or cut the request (RFC 9110 §5.5). */
const isControl = (code: number): boolean => (code < 0x20 && code !== 0x09) || code === 0x7f;
const hasControl = (s: string): boolean => [...s].some((c) => isControl(c.charCodeAt(0)));

/**
 * Names mailroom sets or that belong to the connection, lower-case, with why. The signing names
 * are Standard Webhooks' (src/webhooks/signing.ts); a receiver's library reads only ours.
 */
const RESERVED: ReadonlyMap<string, string> = new Map([
  ['host', 'is set from the URL'],
  ['content-length', 'is set from the body'],
  ['content-type', 'is always application/json'],
  ['content-encoding', 'would misdescribe the body, which is sent as is'],
  ['transfer-encoding', 'is a hop-by-hop header of the connection'],
  ['connection', 'is a hop-by-hop header of the connection'],
  ['keep-alive', 'is a hop-by-hop header of the connection'],
  ['proxy-connection', 'is a hop-by-hop header of the connection'],
  ['proxy-authorization', 'is a hop-by-hop header of the connection'],
  ['proxy-authenticate', 'is a hop-by-hop header of the connection'],
  ['te', 'is a hop-by-hop header of the connection'],
  ['trailer', 'is a hop-by-hop header of the connection'],
  ['upgrade', 'is a hop-by-hop header of the connection'],
  ['expect', 'would make the request wait for a 100 Continue'],
  ['user-agent', 'is set by mailroom (mailroom-webhooks/1)'],
  ['webhook-id', 'is set by mailroom to sign the request'],
  ['webhook-timestamp', 'is set by mailroom to sign the request'],
  ['webhook-signature', 'is set by mailroom to sign the request'],
]);

export interface HeaderProblem {
  field: string;
  message: string;
}

/** What is wrong with a list of custom headers, each problem naming its field (`headers.2.name`) in words. */
export function customHeaderProblems(headers: readonly CustomHeader[], field = 'headers'): HeaderProblem[] {
  const problems: HeaderProblem[] = [];
  if (headers.length > MAX_CUSTOM_HEADERS) {
    problems.push({ field, message: `may list at most ${MAX_CUSTOM_HEADERS} headers (${headers.length} given)` });
  }
  const seen = new Set<string>();
  headers.forEach((h, i) => {
    const at = `${field}.${i}`;
    const lower = h.name.toLowerCase();
    if (h.name === '') problems.push({ field: `${at}.name`, message: 'is empty: give the header name' });
    else if (h.name.length > MAX_HEADER_NAME)
      problems.push({ field: `${at}.name`, message: `is longer than ${MAX_HEADER_NAME} characters` });
    else if (!TOKEN.test(h.name))
      problems.push({
        field: `${at}.name`,
        message: `"${printable(h.name)}" is not a header name: use letters, digits and ! # $ % & ' * + - . ^ _ \` | ~ only`,
      });
    else if (RESERVED.has(lower))
      problems.push({ field: `${at}.name`, message: `"${h.name}" ${RESERVED.get(lower)}: it cannot be set` });
    else if (seen.has(lower)) problems.push({ field: `${at}.name`, message: `"${h.name}" is listed twice` });
    seen.add(lower);
    // The value is a secret: a problem names where it is wrong, never the value itself.
    if (h.value === '') problems.push({ field: `${at}.value`, message: `of "${printable(h.name)}" is empty` });
    else if (h.value.length > MAX_HEADER_VALUE)
      problems.push({ field: `${at}.value`, message: `of "${printable(h.name)}" is longer than ${MAX_HEADER_VALUE} characters` });
    else if (hasControl(h.value))
      problems.push({
        field: `${at}.value`,
        message: `of "${printable(h.name)}" has a line break, NUL or other control character (a tab is the only one allowed)`,
      });
  });
  return problems;
}

/** A name as a message may quote it: control characters shown as \uXXXX, at most 64 characters. */
function printable(name: string): string {
  const shown = name.slice(0, MAX_HEADER_NAME);
  return [...shown]
    .map((c) => (isControl(c.charCodeAt(0)) || c === '\t' ? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}` : c))
    .join('');
}

/** The headers as reads show them: names as stored, every value the mask. */
export function maskedHeaders(headers: readonly CustomHeader[]): CustomHeader[] {
  return headers.map((h) => ({ name: h.name, value: SECRET_MASK }));
}

/**
 * An attempt's headers: the custom ones, then mailroom's own (so ours win, should a stored row
 * ever hold a reserved name the checks refuse today), and the same as the log keeps them, every
 * custom value masked.
 */
export function requestHeaders(
  custom: readonly CustomHeader[],
  signed: Readonly<Record<string, string>>,
): { sent: Record<string, string>; logged: Record<string, string> } {
  const ours = new Set(Object.keys(signed).map((k) => k.toLowerCase()));
  const mine = custom.filter((h) => !ours.has(h.name.toLowerCase()));
  return {
    sent: { ...Object.fromEntries(mine.map((h) => [h.name, h.value])), ...signed },
    logged: { ...Object.fromEntries(mine.map((h) => [h.name, SECRET_MASK])), ...signed },
  };
}

/** The stored column (a JSON array) as headers; anything else in it (a hand-edited row) reads as none. */
export function headersFromColumn(column: string | null | undefined): CustomHeader[] {
  if (column === null || column === undefined || column === '') return [];
  try {
    const parsed: unknown = JSON.parse(column);
    if (!Array.isArray(parsed)) return [];
    return parsed.flatMap((h: unknown) =>
      typeof h === 'object' &&
      h !== null &&
      'name' in h &&
      'value' in h &&
      typeof h.name === 'string' &&
      typeof h.value === 'string'
        ? [{ name: h.name, value: h.value }]
        : [],
    );
  } catch {
    return [];
  }
}

export const headersColumn = (headers: readonly CustomHeader[]): string =>
  JSON.stringify(headers.map((h) => ({ name: h.name, value: h.value })));
