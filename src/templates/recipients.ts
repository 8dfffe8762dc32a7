import { isEmailAddress } from './params.js';

export interface Address {
  name: string;
  address: string;
}

export type AddressField = 'to' | 'cc' | 'bcc' | 'reply_to';

export class AddressError extends Error {
  constructor(
    readonly field: AddressField | 'from_email',
    readonly value: string,
    reason: string,
  ) {
    super(reason);
  }
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: what this refuses (header injection through an address).
const CONTROL = /[\u0000-\u001f\u007f]/;

/**
 * Parses a rendered address list: `a@x.com, Bob <b@y.org>; c@z.net`. Any control character
 * (CR/LF above all) refuses the whole field, so parameters can never add a header line.
 */
export function parseAddressList(field: AddressField, raw: string): Address[] {
  if (CONTROL.test(raw)) throw new AddressError(field, raw, 'contains a line break or control character');
  const out: Address[] = [];
  for (const part of splitList(raw)) {
    const entry = part.trim();
    if (entry === '') continue;
    out.push(parseAddress(field, entry));
  }
  return out;
}

export function parseAddress(field: AddressField | 'from_email', entry: string): Address {
  if (CONTROL.test(entry)) throw new AddressError(field, entry, 'contains a line break or control character');
  const m = /^(.*?)\s*<([^<>]+)>$/.exec(entry);
  const name = (m?.[1] ?? '').trim().replace(/^"(.*)"$/, '$1');
  const address = (m?.[2] ?? entry).trim();
  if (!isEmailAddress(address)) throw new AddressError(field, entry, 'is not a valid e-mail address');
  return { name, address };
}

/** Splits on commas and semicolons outside double quotes ("Doe, Jane" <j@x.com> stays whole). */
function splitList(raw: string): string[] {
  const parts: string[] = [];
  let current = '';
  let quoted = false;
  for (const ch of raw) {
    if (ch === '"') quoted = !quoted;
    if (!quoted && (ch === ',' || ch === ';')) {
      parts.push(current);
      current = '';
    } else current += ch;
  }
  parts.push(current);
  return parts;
}

/** Header text (subject, display names): line breaks become spaces, other controls vanish. */
export function headerText(value: string): string {
  return (
    value
      .replace(/[\r\n]+/g, ' ')
      // biome-ignore lint/suspicious/noControlCharactersInRegex: the controls (but tab) a header must not carry.
      .replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, '')
      .trim()
  );
}
