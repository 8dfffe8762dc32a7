/**
 * Encoded header text, one decoder each for the whole project: RFC 2047 encoded words (Subject,
 * display names: the test inbox's view and SMTP submission's summary) and RFC 2231 parameter
 * values (`filename*=UTF-8''…`, continuations). Everything here reads untrusted input: nothing
 * throws, what cannot be decoded is left as written.
 */

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
 * words (folding included) is dropped (§6.2). A word in a charset this runtime cannot decode is left as written.
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
    const adjacent = run !== undefined && /^[ \t\r\n]*$/.test(between);
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

/** Header bytes (as latin1 text) read as UTF-8 where they are valid UTF-8 (RFC 6532), else as latin1. */
export function utf8OrLatin1(latin1: string): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(latin1, 'latin1'));
  } catch {
    return latin1;
  }
}

/** `%XX` escapes of an RFC 2231 extended value as bytes; every other character is its own latin1 byte. */
const percentBytes = (text: string): Buffer =>
  Buffer.from(
    text.replace(/%([0-9A-Fa-f]{2})/g, (_, h: string) => String.fromCharCode(Number.parseInt(h, 16))),
    'latin1',
  );

/**
 * One parameter of a MIME field as its text, given the parameters as parseContentType reads them
 * (names lower-cased, `*` kept, values as latin1 text of the bytes): RFC 2231's extended
 * `name*=charset'lang'%XX…`, else its continuations `name*0`, `name*0*`, `name*1*`… joined in
 * order (the charset is the first segment's), else the plain `name` (UTF-8 or latin1, with RFC
 * 2047 words decoded, which Outlook and Gmail still write in quoted names). Undefined when absent.
 */
export function mimeParameter(params: Readonly<Record<string, string>>, name: string): string | undefined {
  const extended = params[`${name}*`];
  if (extended !== undefined) return fromSegments([{ text: extended, encoded: true }]);
  const segments: Array<{ text: string; encoded: boolean }> = [];
  for (let i = 0; ; i += 1) {
    const encoded = params[`${name}*${i}*`];
    const plain = params[`${name}*${i}`];
    if (encoded === undefined && plain === undefined) break;
    segments.push(encoded !== undefined ? { text: encoded, encoded: true } : { text: plain ?? '', encoded: false });
  }
  if (segments.length > 0) return fromSegments(segments);
  const plain = params[name];
  return plain === undefined ? undefined : decodeEncodedWords(utf8OrLatin1(plain));
}

/** RFC 2231 §4: the first encoded segment starts with `charset'language'`; undecodable → its UTF-8 or latin1 reading. */
function fromSegments(segments: ReadonlyArray<{ text: string; encoded: boolean }>): string {
  let charset = '';
  const bytes = segments.map((s, i) => {
    if (!s.encoded) return Buffer.from(s.text, 'latin1');
    let text = s.text;
    const m = i === 0 ? /^([^']*)'[^']*'/.exec(text) : null;
    if (m !== null) {
      charset = m[1] ?? '';
      text = text.slice(m[0].length);
    }
    return percentBytes(text);
  });
  const all = Buffer.concat(bytes);
  return (charset === '' ? undefined : decodeCharset(charset, all)) ?? utf8OrLatin1(all.toString('latin1'));
}
