/**
 * Just enough MIME to read a report (RFC 3464 DSN, RFC 5965 ARF): header fields, the parts of
 * a multipart body, and transfer decoding. A full parser (mailparser) folds
 * message/delivery-status into the text body, which loses the very fields we need; these
 * reports are small, plain structures, so a walker of our own is simpler than undoing that.
 * Everything here is untrusted input: no recursion deeper than MAX_DEPTH, no part count above
 * MAX_PARTS, and nothing throws on malformed text (it reads as fewer fields or parts).
 */

export interface Fields {
  /** Lower-cased field name → values in order (a field may repeat). */
  get(name: string): string | undefined;
  all(name: string): string[];
}

export interface Part {
  headers: Fields;
  /** Lower-cased type/subtype; text/plain when absent, as RFC 2045 says. */
  contentType: string;
  params: Readonly<Record<string, string>>;
  /** Transfer-decoded bytes of the body (for multiparts: the raw body). */
  body: Buffer;
  parts: Part[];
}

const MAX_DEPTH = 5;
const MAX_PARTS = 50;

/** Header fields of a block of text, unfolded (continuation lines joined with one space). */
export function parseFields(text: string): Fields {
  const map = new Map<string, string[]>();
  let current: { name: string; value: string } | undefined;
  const flush = () => {
    if (current === undefined) return;
    const list = map.get(current.name) ?? [];
    list.push(current.value.trim());
    map.set(current.name, list);
    current = undefined;
  };
  for (const line of text.split(/\r?\n/)) {
    if (/^[ \t]/.test(line) && current !== undefined) {
      current.value += ` ${line.trim()}`;
      continue;
    }
    flush();
    const colon = line.indexOf(':');
    if (colon > 0) current = { name: line.slice(0, colon).trim().toLowerCase(), value: line.slice(colon + 1) };
  }
  flush();
  return { get: (name) => map.get(name.toLowerCase())?.[0], all: (name) => map.get(name.toLowerCase()) ?? [] };
}

/** `type/subtype; a=b; c="d"` → the lower-cased type and its parameters (names lower-cased). */
export function parseContentType(value: string | undefined): { type: string; params: Record<string, string> } {
  if (value === undefined) return { type: 'text/plain', params: {} };
  const [type = '', ...rest] = value.split(';');
  const params: Record<string, string> = {};
  for (const [, name, raw] of rest.join(';').matchAll(/([A-Za-z0-9._*-]+)\s*=\s*("(?:[^"\\]|\\.)*"|[^;\s]+)/g)) {
    // Both groups take part in every match; the check only tells the compiler so.
    if (name === undefined || raw === undefined) continue;
    params[name.toLowerCase()] = raw.startsWith('"') ? raw.slice(1, -1).replace(/\\(.)/g, '$1') : raw;
  }
  return { type: type.trim().toLowerCase() || 'text/plain', params };
}

function decode(body: Buffer, encoding: string | undefined): Buffer {
  const e = (encoding ?? '').trim().toLowerCase();
  if (e === 'base64') return Buffer.from(body.toString('latin1').replace(/[^A-Za-z0-9+/=]/g, ''), 'base64');
  if (e === 'quoted-printable') {
    const text = body.toString('latin1').replace(/=\r?\n/g, '');
    return Buffer.from(
      text.replace(/=([0-9A-Fa-f]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16))),
      'latin1',
    );
  }
  return body;
}

/** Splits an entity into its header block and body at the first empty line. */
function splitEntity(raw: Buffer): { head: string; body: Buffer } {
  const text = raw.toString('latin1');
  const m = /\r?\n\r?\n/.exec(text);
  if (m === null) return { head: text, body: Buffer.alloc(0) };
  return { head: text.slice(0, m.index), body: raw.subarray(m.index + m[0].length) };
}

/**
 * What a walk may still read. `truncated` is set when the caps left something unread: a
 * multipart with a boundary at depth MAX_DEPTH, or parts after the MAX_PARTS-th. A report reader
 * takes the truncated walk as it is; a policy on the parts (SMTP submission's attachment rules)
 * must refuse it, since the parts it did not see are delivered all the same.
 */
export interface WalkBudget {
  parts: number;
  truncated: boolean;
}

export function parseEntity(raw: Buffer, depth = 0, budget: WalkBudget = { parts: 0, truncated: false }): Part {
  const { head, body } = splitEntity(raw);
  const headers = parseFields(head);
  const { type, params } = parseContentType(headers.get('content-type'));
  const part: Part = {
    headers,
    contentType: type,
    params,
    body: decode(body, headers.get('content-transfer-encoding')),
    parts: [],
  };
  const boundary = params.boundary;
  if (!type.startsWith('multipart/') || boundary === undefined) return part;
  if (depth >= MAX_DEPTH) {
    budget.truncated = true;
    return part;
  }
  part.body = body;
  const escaped = boundary.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  // split() with the capture gives: preamble, then (closing marker, content) pairs.
  const pieces = body.toString('latin1').split(new RegExp(`(?:^|\\r?\\n)--${escaped}(--)?[ \\t]*(?:\\r?\\n|$)`));
  let i = 1;
  for (; i < pieces.length && budget.parts < MAX_PARTS; i += 2) {
    if (pieces[i] === '--') break;
    budget.parts += 1;
    part.parts.push(parseEntity(Buffer.from(pieces[i + 1] ?? '', 'latin1'), depth + 1, budget));
  }
  // Out of budget with a part still ahead (not the closing delimiter).
  if (i < pieces.length && pieces[i] !== '--') budget.truncated = true;
  return part;
}

/** Every part, depth first (the entity itself first). */
export function walk(part: Part): Part[] {
  return [part, ...part.parts.flatMap(walk)];
}

/** A message/delivery-status or feedback-report body: blocks of fields separated by empty lines. */
export function fieldBlocks(body: Buffer): Fields[] {
  return body
    .toString('utf8')
    .split(/\r?\n[ \t]*\r?\n/)
    .filter((b) => b.trim() !== '')
    .map(parseFields);
}
