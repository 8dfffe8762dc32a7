/**
 * The header fields of a captured message (issue 27 §4), read from the stored bytes themselves:
 * the test inbox shows what a recipient's mail client would get, never a recomposition (the
 * composer's boundaries and Date differ per run). Just enough RFC 5322 for that: the header
 * block up to the first empty line, unfolded, and RFC 2047 encoded words decoded for display.
 * A full parser (mailparser) is a devDependency only (decision D6); these bytes are nodemailer's
 * own output, plain and well-formed, and nothing here throws on malformed text either.
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

const ENCODED_WORD = /=\?([^?\s]+)\?([BbQq])\?([^?\s]*)\?=/g;

/** The bytes an encoded word's text stands for. Q: `_` is a space, `=XX` a byte (RFC 2047 §4.2). */
function wordBytes(encoding: string, text: string): Buffer {
  if (encoding.toUpperCase() === 'B') return Buffer.from(text, 'base64');
  const latin = text
    .replace(/_/g, ' ')
    .replace(/=([0-9A-Fa-f]{2})/g, (_, h: string) => String.fromCharCode(Number.parseInt(h, 16)));
  return Buffer.from(latin, 'latin1');
}

/** Bytes in a charset (RFC 2231's `*language` suffix dropped); undefined for a charset unknown here. */
function decodeCharset(charset: string, bytes: Buffer): string | undefined {
  try {
    return new TextDecoder(charset.split('*')[0] ?? charset, { fatal: false }).decode(bytes);
  } catch {
    return undefined;
  }
}

/**
 * RFC 2047 encoded words decoded. Adjacent words of one charset are decoded together, as an
 * encoder may split a multi-byte character between them; the whitespace between adjacent
 * words is dropped (§6.2). A word in a charset this runtime cannot decode is left as written.
 */
export function decodeEncodedWords(value: string): string {
  if (!value.includes('=?')) return value;
  let out = '';
  let last = 0;
  let run: { charset: string; bytes: Buffer[]; source: string } | undefined;
  const flush = () => {
    if (run === undefined) return;
    out += decodeCharset(run.charset, Buffer.concat(run.bytes)) ?? run.source;
    run = undefined;
  };
  for (const m of value.matchAll(ENCODED_WORD)) {
    const [word, charset = '', encoding = '', text = ''] = m;
    const between = value.slice(last, m.index);
    const adjacent = run !== undefined && /^[ \t]*$/.test(between);
    if (!adjacent) {
      flush();
      out += between;
    }
    if (run !== undefined && run.charset.toLowerCase() !== charset.toLowerCase()) flush();
    run ??= { charset, bytes: [], source: '' };
    run.bytes.push(wordBytes(encoding, text));
    run.source += word;
    last = m.index + word.length;
  }
  flush();
  return out + value.slice(last);
}
