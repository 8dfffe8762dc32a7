/**
 * Showing stored addresses readably (issue 25). The server keys an address's domain by its
 * A-label (`zoë@xn--exmple-cua.com`, src/domain/addresses.ts); a browser has no function that
 * turns an A-label back (URL keeps hosts in ASCII), so this is RFC 3492's decoder, for display
 * only: what is stored, compared and sent back to the API stays the A-label form.
 */

const BASE = 36;
const T_MIN = 1;
const T_MAX = 26;
const SKEW = 38;
const DAMP = 700;
const INITIAL_BIAS = 72;
const INITIAL_N = 128;

function adapt(delta: number, points: number, first: boolean): number {
  let d = first ? Math.floor(delta / DAMP) : delta >> 1;
  d += Math.floor(d / points);
  let k = 0;
  while (d > ((BASE - T_MIN) * T_MAX) >> 1) {
    d = Math.floor(d / (BASE - T_MIN));
    k += BASE;
  }
  return k + Math.floor(((BASE - T_MIN + 1) * d) / (d + SKEW));
}

function digit(code: number): number {
  if (code >= 0x30 && code <= 0x39) return code - 22; // 0-9 → 26..35
  if (code >= 0x61 && code <= 0x7a) return code - 0x61; // a-z → 0..25
  return BASE;
}

/** One label's Punycode (without `xn--`) decoded, or undefined when it is not valid Punycode. */
function decodeLabel(input: string): string | undefined {
  const last = input.lastIndexOf('-');
  const output = last > 0 ? [...input.slice(0, last)].map((c) => c.codePointAt(0) ?? 0) : [];
  if (output.some((c) => c >= 0x80)) return undefined;
  let n = INITIAL_N;
  let bias = INITIAL_BIAS;
  let i = 0;
  for (let pos = last > 0 ? last + 1 : 0; pos < input.length; ) {
    const oldI = i;
    for (let w = 1, k = BASE; ; k += BASE) {
      if (pos >= input.length) return undefined;
      const d = digit(input.charCodeAt(pos++));
      if (d >= BASE) return undefined;
      i += d * w;
      const t = k <= bias ? T_MIN : k >= bias + T_MAX ? T_MAX : k - bias;
      if (d < t) break;
      w *= BASE - t;
      if (i > 0x7fffffff || w > 0x7fffffff) return undefined;
    }
    const count = output.length + 1;
    bias = adapt(i - oldI, count, oldI === 0);
    n += Math.floor(i / count);
    i %= count;
    if (n > 0x10ffff) return undefined;
    output.splice(i, 0, n);
    i++;
  }
  return String.fromCodePoint(...output);
}

/** `xn--exmple-cua.com` → `exämple.com`; labels that are not valid A-labels stay as they are. */
export function unicodeDomain(domain: string): string {
  return domain
    .split('.')
    .map((label) => {
      if (!label.toLowerCase().startsWith('xn--')) return label;
      return decodeLabel(label.slice(4).toLowerCase()) ?? label;
    })
    .join('.');
}

/** An address or block-list value with its domain decoded for reading: `zoë@xn--exmple-cua.com` → `zoë@exämple.com`. */
export function readableAddress(value: string): string {
  const at = value.lastIndexOf('@');
  const domain = at === -1 ? value : value.slice(at + 1);
  if (!domain.toLowerCase().includes('xn--')) return value;
  return at === -1 ? unicodeDomain(value) : `${value.slice(0, at)}@${unicodeDomain(domain)}`;
}
