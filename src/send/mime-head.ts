import addressparser from 'nodemailer/lib/addressparser';

/**
 * The header block of a submitted message, at the byte level (SMTP submission, issue 28): where
 * each field begins and ends (folded continuation lines included), so fields can be removed or
 * added without touching a single other byte. Decoding is only for reading values (Subject,
 * From); what is delivered is always the original bytes. Everything here is untrusted input:
 * nothing throws, a header that cannot be read is `undefined`.
 */

/** The most bytes a header block may take (contract: no separator within 64 KiB → malformed). */
export const MAX_HEAD_BYTES = 64 * 1024;

export interface HeadField {
  /** Lower-cased field name; '' for a line that is no field (kept as it is). */
  lower: string;
  /** Byte offsets of the field in the message: its first line up to the end of its last continuation line. */
  start: number;
  end: number;
  /** The value unfolded (line breaks of folding removed), as latin1 text of the raw bytes. */
  raw: string;
}

export interface Head {
  fields: HeadField[];
  /** Where the header block ends: the empty line's offset (or the message's end without a body). */
  end: number;
  /** The line ending the block uses, for fields we add: CRLF as SMTP sends, LF when the block has no CR. */
  eol: '\r\n' | '\n';
}

/**
 * The header block, or undefined when it does not end within MAX_HEAD_BYTES. A message of less
 * than that without an empty line is all header (RFC 5322 allows no body).
 */
export function readHead(raw: Buffer): Head | undefined {
  const text = raw.subarray(0, MAX_HEAD_BYTES + 2).toString('latin1');
  const fields: HeadField[] = [];
  let eol: Head['eol'] | undefined;
  let pos = 0;
  while (pos < text.length) {
    const nl = text.indexOf('\n', pos);
    if (nl < 0 && raw.length > text.length) return undefined;
    const next = nl < 0 ? text.length : nl + 1;
    const line = text.slice(pos, nl < 0 ? text.length : nl).replace(/\r$/, '');
    if (nl >= 0) eol ??= text[nl - 1] === '\r' ? '\r\n' : '\n';
    if (line === '') return { fields, end: pos, eol: eol ?? '\r\n' };
    if (next > MAX_HEAD_BYTES) return undefined;
    const last = fields.at(-1);
    if ((line.startsWith(' ') || line.startsWith('\t')) && last !== undefined) {
      last.end = next;
      last.raw += line;
    } else {
      const colon = line.indexOf(':');
      const name = colon > 0 ? line.slice(0, colon).trim() : '';
      const valid = /^[\x21-\x39\x3b-\x7e]+$/.test(name);
      fields.push({ lower: valid ? name.toLowerCase() : '', start: pos, end: next, raw: valid ? line.slice(colon + 1) : line });
    }
    pos = next;
  }
  return raw.length > MAX_HEAD_BYTES ? undefined : { fields, end: pos, eol: eol ?? '\r\n' };
}

/** Every value of a field (unfolded, trimmed, latin1 text of its bytes), in order. */
export function fieldValues(head: Head, name: string): string[] {
  const lower = name.toLowerCase();
  return head.fields.filter((f) => f.lower === lower).map((f) => f.raw.trim());
}

/** The message without the fields `drop` names (by lower-cased name): every other byte as it was. */
export function withoutFields(raw: Buffer, head: Head, drop: (lower: string) => boolean): Buffer {
  const gone = head.fields.filter((f) => drop(f.lower));
  if (gone.length === 0) return raw;
  const pieces: Buffer[] = [];
  let at = 0;
  for (const f of gone) {
    pieces.push(raw.subarray(at, f.start));
    at = f.end;
  }
  pieces.push(raw.subarray(at));
  return Buffer.concat(pieces);
}

/** Fields put before the message's own (`Name: value` each, ASCII, ours), in the block's line ending. */
export function prependFields(raw: Buffer, lines: readonly string[], eol: Head['eol'] = '\r\n'): Buffer {
  if (lines.length === 0) return raw;
  return Buffer.concat([Buffer.from(lines.map((l) => `${l}${eol}`).join(''), 'latin1'), raw]);
}

/** Header bytes read as text: UTF-8 where they are valid UTF-8 (RFC 6532), else latin1, then RFC 2047 words decoded. */
export function headerText(latin1: string): string {
  const bytes = Buffer.from(latin1, 'latin1');
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    text = latin1;
  }
  return decodeWords(text).replace(/\s+/g, ' ').trim();
}

const ENCODED_WORD = /=\?([^?\s]+)\?([BbQq])\?([^?\s]*)\?=/g;

/** RFC 2047 encoded words (B and Q); whitespace between two adjacent words goes (§6.2); unknown charsets stay encoded. */
export function decodeWords(value: string): string {
  return value.replace(/(\?=)\s+(?==\?)/g, '$1').replace(ENCODED_WORD, (word, charset: string, enc: string, data: string) => {
    const bytes =
      enc.toUpperCase() === 'B'
        ? Buffer.from(data, 'base64')
        : Buffer.from(
            data.replace(/_/g, ' ').replace(/=([0-9A-Fa-f]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16))),
            'latin1',
          );
    try {
      return new TextDecoder(charset.replace(/\*.*$/, '')).decode(bytes);
    } catch {
      return word;
    }
  });
}

export interface Mailbox {
  name: string;
  address: string;
}

/** The mailboxes of an address field (groups flattened), names decoded; [] when unreadable. */
export function mailboxes(value: string): Mailbox[] {
  // Parsed before decoding: an encoded name may hold a comma (`=?utf-8?Q?Doe,_Jane?=`).
  return addressparser(value.replace(/[\r\n]+/g, ' '), { flatten: true })
    .filter((a) => a.address !== '')
    .map((a) => ({ name: headerText(a.name), address: a.address }));
}

/** `Thu, 05 Mar 2026 10:00:00 +0000`, the RFC 5322 date nodemailer writes for API sends. */
export function rfc5322Date(ms: number): string {
  return new Date(ms).toUTCString().replace(/GMT$/, '+0000');
}
