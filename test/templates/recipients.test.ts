import { describe, expect, it } from 'vitest';
import { AddressError, headerText, parseAddress, parseAddressList } from '../../src/templates/recipients.js';

/** Address lists as rendered into To/CC/BCC/Reply-To, and header text (subject, names). */

const parsed = (raw: string) => parseAddressList('to', raw);

describe('parseAddressList', () => {
  it('one plain address', () => {
    expect(parsed('ann@example.com')).toEqual([{ name: '', address: 'ann@example.com' }]);
    expect(parsed('  ann@example.com  ')).toEqual([{ name: '', address: 'ann@example.com' }]);
  });

  it('a display name with angle brackets', () => {
    expect(parsed('Ann Smith <ann@example.com>')).toEqual([{ name: 'Ann Smith', address: 'ann@example.com' }]);
    expect(parsed('<ann@example.com>')).toEqual([{ name: '', address: 'ann@example.com' }]);
  });

  it('commas and semicolons separate addresses', () => {
    expect(parsed('a@x.com, Bob <b@y.org>; c@z.net')).toEqual([
      { name: '', address: 'a@x.com' },
      { name: 'Bob', address: 'b@y.org' },
      { name: '', address: 'c@z.net' },
    ]);
    expect(parsed('a@x.com;b@y.org').map((a) => a.address)).toEqual(['a@x.com', 'b@y.org']);
  });

  it('a quoted display name with a comma or semicolon stays one address', () => {
    expect(parsed('"Doe, Jane" <j@x.com>')).toEqual([{ name: 'Doe, Jane', address: 'j@x.com' }]);
    expect(parsed('"Doe; Jane" <j@x.com>, k@x.com')).toEqual([
      { name: 'Doe; Jane', address: 'j@x.com' },
      { name: '', address: 'k@x.com' },
    ]);
  });

  it('empty entries are skipped; an empty field is an empty list', () => {
    expect(parsed('')).toEqual([]);
    expect(parsed('   ')).toEqual([]);
    expect(parsed(' , ; ,')).toEqual([]);
    expect(parsed('a@x.com,').map((a) => a.address)).toEqual(['a@x.com']);
    expect(parsed(',a@x.com,,b@y.org;').map((a) => a.address)).toEqual(['a@x.com', 'b@y.org']);
  });

  it('refuses an entry that is not an address, naming the field', () => {
    for (const raw of [
      'not an address',
      'ann@',
      '@example.com',
      'Ann <ann@>',
      'Ann <ann@example.com',
      'a@x.com, nobody',
      'Doe, Jane <j@x.com>',
    ]) {
      let caught: unknown;
      try {
        parseAddressList('cc', raw);
      } catch (err) {
        caught = err;
      }
      expect(caught, raw).toBeInstanceOf(AddressError);
      expect((caught as AddressError).field).toBe('cc');
    }
  });

  it('refuses control characters anywhere in the field: no header can be added', () => {
    const injections = [
      'victim@example.com\r\nBcc: evil@x.com',
      'victim@example.com\nBcc: evil@x.com',
      'victim@example.com\rBcc: evil@x.com',
      'Victim\r\n <victim@example.com>',
      '"Vic\r\ntim" <victim@example.com>',
      'victim@example.com\u0000',
      'victim@example.com\t',
      'victim@example.com\u007f',
      'ok@example.com, evil@x.com\r\nSubject: hi',
    ];
    for (const raw of injections) {
      for (const field of ['to', 'cc', 'bcc', 'reply_to'] as const) {
        expect(() => parseAddressList(field, raw), JSON.stringify(raw)).toThrow(AddressError);
      }
    }
  });
});

describe('parseAddress', () => {
  it('parses one entry and refuses control characters', () => {
    expect(parseAddress('from_email', 'Acme <noreply@acme.test>')).toEqual({ name: 'Acme', address: 'noreply@acme.test' });
    expect(() => parseAddress('from_email', 'noreply@acme.test\r\nBcc: x@y.com')).toThrow(AddressError);
    expect(() => parseAddress('from_email', 'noreply')).toThrow(AddressError);
  });
});

describe('headerText', () => {
  it('turns line breaks into a space, so a value can never start a header line', () => {
    expect(headerText('Hello\r\nBcc: evil@x.com')).toBe('Hello Bcc: evil@x.com');
    expect(headerText('Hello\nBcc: evil@x.com')).toBe('Hello Bcc: evil@x.com');
    expect(headerText('Hello\rBcc: evil@x.com')).toBe('Hello Bcc: evil@x.com');
    expect(headerText('a\r\n\r\n\nb')).toBe('a b');
  });

  it('drops other control characters', () => {
    expect(headerText('a\u0000b\u0007c\u001bd\u007fe')).toBe('abcde');
    expect(headerText('a\u000bb\u000cc')).toBe('abc');
  });

  it('never leaves CR or LF, whatever the input', () => {
    const nasty = ['\r', '\n', '\r\n', '\n\r', ' \r \n ', 'x\u2028y\r\n\u0085z'];
    for (const s of nasty) expect(headerText(`A${s}B`)).not.toMatch(/[\r\n]/);
  });

  it('keeps ordinary text as it is: no HTML escaping in headers', () => {
    expect(headerText('Tom & Jerry <tj@example.com> "quoted" ünïcödé 🎉')).toBe(
      'Tom & Jerry <tj@example.com> "quoted" ünïcödé 🎉',
    );
  });

  it('trims the ends', () => {
    expect(headerText('  Hello  ')).toBe('Hello');
    expect(headerText('\r\nHello\r\n')).toBe('Hello');
    expect(headerText('')).toBe('');
  });
});
