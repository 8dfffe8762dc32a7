import addressparser from 'nodemailer/lib/addressparser';
import { decodeEncodedWords, utf8OrLatin1 } from './encoded-words.js';

/**
 * The header block of a submitted message, at the byte level (SMTP submission, issue 28): where
 * each field begins and ends (folded continuation lines included), so fields can be removed or
 * added without touching a single other byte. Decoding is only for reading values (Subject,
 * From); what is delivered is always the original bytes. Everything here is untrusted input:
 * nothing throws, a header that cannot be read is `undefined`.
 */

/** The most bytes a header block may take (contract: no separator within 64 KiB → malformed). */
export const MAX_HEAD_BYTES = 64 * 1024;

interface HeadField {
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

/**
 * The message with the fields `drop` names (by lower-cased name) removed and `add` (`Name: value`
 * each, ASCII, ours, in the block's line ending) put before the others: every other byte as it
 * was, and one copy of the message at most (none when nothing changes).
 */
export function rewriteHead(raw: Buffer, head: Head, drop: (lower: string) => boolean, add: readonly string[]): Buffer {
  const gone = head.fields.filter((f) => drop(f.lower));
  if (gone.length === 0 && add.length === 0) return raw;
  const pieces: Buffer[] = add.length === 0 ? [] : [Buffer.from(add.map((l) => `${l}${head.eol}`).join(''), 'latin1')];
  let at = 0;
  for (const f of gone) {
    pieces.push(raw.subarray(at, f.start));
    at = f.end;
  }
  pieces.push(raw.subarray(at));
  return Buffer.concat(pieces);
}

/** Fields put before the message's own (`Name: value` each, ASCII, ours), in the message's line ending. */
export function prependFields(raw: Buffer, lines: readonly string[]): Buffer {
  if (lines.length === 0) return raw;
  return Buffer.concat([Buffer.from(lines.map((l) => `${l}${lineEnding(raw)}`).join(''), 'latin1'), raw]);
}

/** The first line's ending, as readHead takes it: CRLF as SMTP sends, LF for a message stored without CRs. */
function lineEnding(raw: Buffer): Head['eol'] {
  const nl = raw.indexOf(10);
  if (nl < 0) return '\r\n';
  return nl > 0 && raw[nl - 1] === 13 ? '\r\n' : '\n';
}

/** A header value read as text (UTF-8 or latin1, RFC 2047 words decoded), whitespace runs made one space. */
export function decodedHeaderText(latin1: string): string {
  return decodeEncodedWords(utf8OrLatin1(latin1)).replace(/\s+/g, ' ').trim();
}

/** `<id@host>` as stored in header_message_id (provider events match it), whatever the spacing or brackets given. */
export function bracketed(id: string): string {
  return `<${id.trim().replace(/^<|>$/g, '')}>`;
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
    .map((a) => ({ name: decodedHeaderText(a.name), address: a.address }));
}

/** `Thu, 05 Mar 2026 10:00:00 +0000`, the RFC 5322 date nodemailer writes for API sends. */
export function rfc5322Date(ms: number): string {
  return new Date(ms).toUTCString().replace(/GMT$/, '+0000');
}
