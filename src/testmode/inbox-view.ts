import { decodeEncodedWords } from '../mime/encoded-words.js';

/**
 * The header fields of a captured message (issue 27 §4), read from the stored bytes themselves:
 * the test inbox shows what a recipient's mail client would get, never a recomposition (the
 * composer's boundaries and Date differ per run). Just enough RFC 5322 for that: the header
 * block up to the first empty line, unfolded, and RFC 2047 encoded words decoded for display.
 * No full parser (mailparser) is needed for that: these bytes are nodemailer's own output or an
 * SMTP submission's, and nothing here throws on malformed text either.
 */

export interface HeaderField {
  /** As written (`Message-ID`, `Subject`, …). */
  name: string;
  /** Unfolded, encoded words decoded, surrounding whitespace trimmed. */
  value: string;
}

/** The header block's end: the first empty line (CRLF CRLF; a bare LF LF is accepted too). */
function headerEnd(raw: Buffer): number {
  const crlf = raw.indexOf('\r\n\r\n');
  const lf = raw.indexOf('\n\n');
  if (crlf === -1) return lf === -1 ? raw.length : lf;
  return lf === -1 ? crlf : Math.min(crlf, lf);
}

/**
 * The header fields in order, a repeated field once per occurrence. RFC 5322 §2.2.3: unfolding
 * removes each line break followed by whitespace, keeping the whitespace. A line with no colon
 * (not a field) is skipped.
 */
export function parseHeaders(raw: Buffer): HeaderField[] {
  const head = raw.subarray(0, headerEnd(raw)).toString('utf8');
  const unfolded = head.replace(/\r?\n(?=[ \t])/g, '');
  const fields: HeaderField[] = [];
  for (const line of unfolded.split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim();
    if (name === '' || /\s/.test(name)) continue;
    fields.push({ name, value: decodeEncodedWords(line.slice(colon + 1).trim()) });
  }
  return fields;
}

/** The first value of a field, by name, case-insensitively. */
export function headerValue(fields: readonly HeaderField[], name: string): string | undefined {
  const lower = name.toLowerCase();
  return fields.find((f) => f.name.toLowerCase() === lower)?.value;
}
