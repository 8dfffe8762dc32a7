import { describe, expect, it } from 'vitest';
import { rawComposer } from '../../src/delivery/transports/raw-mime.js';
import { decodeEncodedWords } from '../../src/mime/encoded-words.js';
import { headerValue, parseHeaders } from '../../src/testmode/inbox-view.js';

const crlf = (...lines: string[]) => Buffer.from(lines.join('\r\n'), 'utf8');

describe('parseHeaders', () => {
  it('reads the header block only, in order, a repeated field each time', () => {
    const raw = crlf('From: a@example.org', 'Received: one', 'Received: two', 'Subject: hi', '', 'Body: not a header', '');
    expect(parseHeaders(raw)).toEqual([
      { name: 'From', value: 'a@example.org' },
      { name: 'Received', value: 'one' },
      { name: 'Received', value: 'two' },
      { name: 'Subject', value: 'hi' },
    ]);
  });

  it('unfolds continuation lines keeping their whitespace, and skips lines that are no field', () => {
    const raw = crlf('To: a@example.org,', ' b@example.org,', '\tc@example.org', 'garbage line', ': no name', '', 'x');
    expect(parseHeaders(raw)).toEqual([{ name: 'To', value: 'a@example.org, b@example.org,\tc@example.org' }]);
  });

  it('accepts bare LF line ends, and a message that is all headers', () => {
    expect(parseHeaders(Buffer.from('A: 1\nB: 2\n\nC: 3'))).toEqual([
      { name: 'A', value: '1' },
      { name: 'B', value: '2' },
    ]);
    expect(parseHeaders(Buffer.from('A: 1\r\nB: 2'))).toHaveLength(2);
    expect(parseHeaders(Buffer.alloc(0))).toEqual([]);
  });

  it('finds a field by name whatever its case', () => {
    const fields = parseHeaders(crlf('Message-ID: <x@y>', '', ''));
    expect(headerValue(fields, 'message-id')).toBe('<x@y>');
    expect(headerValue(fields, 'bcc')).toBeUndefined();
  });
});

describe('decodeEncodedWords', () => {
  it('decodes B and Q words, dropping the space between adjacent words only', () => {
    expect(decodeEncodedWords('=?UTF-8?B?SGVsbG8=?= =?UTF-8?Q?_w=C3=B6rld?= and =?utf-8?q?more?=')).toBe('Hello wörld and more');
    expect(decodeEncodedWords('plain text')).toBe('plain text');
  });

  it('joins a multi-byte character split between two words', () => {
    // "é" is C3 A9 in UTF-8: one byte per word.
    expect(decodeEncodedWords('=?UTF-8?Q?caf=C3?= =?UTF-8?Q?=A9?=')).toBe('café');
  });

  it('decodes other charsets and leaves an unknown one as written', () => {
    expect(decodeEncodedWords('=?ISO-8859-1?Q?caf=E9?=')).toBe('café');
    expect(decodeEncodedWords('=?x-no-such-charset?Q?abc?= tail')).toBe('=?x-no-such-charset?Q?abc?= tail');
  });
});

describe('the headers of a message the sandbox composes', () => {
  it('shows the subject decoded, the Message-ID, and no Bcc', async () => {
    const composer = rawComposer();
    const subject = `Grüße aus Köln — ${'long subject '.repeat(8).trim()}`;
    const raw = await composer.compose({
      messageId: 'msg_1',
      headerMessageId: '<msg_1@mailroom.test>',
      email: {
        from: { address: 'app@example.org', name: 'App' },
        to: [{ name: '', address: 'delivered@simulator.mailroom.test' }],
        cc: [{ name: '', address: 'cc@example.org' }],
        bcc: [{ name: '', address: 'hidden@example.org' }],
        reply_to: [],
        subject,
        text: 'hello',
        html: '',
      },
      attachments: [],
    });
    composer.close();
    const fields = parseHeaders(raw.bytes);
    // nodemailer folds and encodes this subject: the test needs both to mean anything.
    expect(raw.bytes.toString('latin1')).toMatch(/Subject: =\?UTF-8\?[BQ]\?.*\r\n /);
    expect(headerValue(fields, 'Subject')).toBe(subject);
    expect(headerValue(fields, 'Message-ID')).toBe('<msg_1@mailroom.test>');
    expect(headerValue(fields, 'Cc')).toBe('cc@example.org');
    expect(headerValue(fields, 'Bcc')).toBeUndefined();
    expect(raw.recipients).toContain('hidden@example.org');
  });
});
