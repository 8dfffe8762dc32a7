import { describe, expect, it } from 'vitest';
import { decodeEncodedWords } from '../../src/mime/encoded-words.js';
import { decodedHeaderText, fieldValues, mailboxes, prependFields, readHead, rewriteHead } from '../../src/mime/head.js';
import { checkSubmittedAttachments, dropOnDelivery } from '../../src/send/submitted.js';
import { SUBMISSION_MAX_SIZE, submissionSizeLimit } from '../../src/send/submission.js';

// The byte-level header functions of SMTP submission (src/mime/head.ts): what is removed is
// exactly the field, folded lines included, and not one other byte.

const strip = (text: string): string => {
  const raw = Buffer.from(text, 'latin1');
  const head = readHead(raw);
  if (head === undefined) throw new Error('no head');
  return rewriteHead(raw, head, dropOnDelivery, []).toString('latin1');
};

describe('submitted header block', () => {
  it('removes a folded Bcc with its continuation lines, in any case, and nothing else', () => {
    const text =
      'From: a@acme.test\r\nBCC: one@x.test,\r\n two@x.test,\r\n\tthree@x.test\r\n' +
      'Subject: hi\r\n bye\r\nbcc: four@x.test\r\n\r\nbody\r\n';
    expect(strip(text)).toBe('From: a@acme.test\r\nSubject: hi\r\n bye\r\n\r\nbody\r\n');
  });

  it('reads LF-only input and keeps its line ends', () => {
    const text =
      'From: a@acme.test\nBcc: one@x.test,\n two@x.test\nX-Mailroom-Service: smtp\nTo: b@x.test\n\nbody\nBcc: not a header\n';
    expect(strip(text)).toBe('From: a@acme.test\nTo: b@x.test\n\nbody\nBcc: not a header\n');
    expect(readHead(Buffer.from(text))?.eol).toBe('\n');
  });

  it('leaves "Bcc:" in the body untouched (only the header block is read)', () => {
    const text = 'From: a@acme.test\r\nSubject: s\r\n\r\nBcc: body@x.test\r\n X-Mailroom-Template: x\r\n';
    expect(strip(text)).toBe(text);
  });

  it('removes every X-Mailroom-* field, keeps other X- fields', () => {
    const text = 'X-Mailroom-Template: t\r\nX-Other: keep\r\nx-mailroom-params: {"a":\r\n 1}\r\nFrom: a@acme.test\r\n\r\n';
    expect(strip(text)).toBe('X-Other: keep\r\nFrom: a@acme.test\r\n\r\n');
  });

  it('finds Message-ID in any case, unfolds values, decodes RFC 2047 words and UTF-8', () => {
    const head = readHead(
      Buffer.from('message-id:\r\n <abc@x.test>\r\nSubject: =?utf-8?Q?Gr=C3=BC=C3=9Fe?= =?utf-8?B?IGF1cyBLw7Zsbg==?=\r\n\r\n'),
    );
    if (head === undefined) throw new Error('no head');
    expect(fieldValues(head, 'Message-ID')).toEqual(['<abc@x.test>']);
    expect(decodeEncodedWords(fieldValues(head, 'subject')[0] ?? '')).toBe('Grüße aus Köln');
    expect(mailboxes('=?utf-8?Q?Doe=2C_Jane?= <j@x.test>, "B" <b@x.test>')).toEqual([
      { name: 'Doe, Jane', address: 'j@x.test' },
      { name: 'B', address: 'b@x.test' },
    ]);
  });

  it('one RFC 2047 decoder: a character split across two words is one character in a subject or a name', () => {
    // "é" is C3 A9 in UTF-8, one byte per word (the test inbox's decoder, src/mime/encoded-words.ts).
    expect(decodedHeaderText('=?UTF-8?Q?caf=C3?=\r\n =?UTF-8?B?qQ==?= ouvert')).toBe('café ouvert');
    expect(mailboxes('=?UTF-8?Q?Ren=C3?= =?UTF-8?Q?=A9e?= <r@x.test>')).toEqual([{ name: 'Renée', address: 'r@x.test' }]);
  });

  it('fields are added and removed in one copy, in the message line ending; nothing to do is no copy', () => {
    const raw = Buffer.from('Bcc: x@y.test\nFrom: a@acme.test\n\nbody\r\nline\r\n');
    const head = readHead(raw);
    if (head === undefined) throw new Error('no head');
    expect(rewriteHead(raw, head, dropOnDelivery, ['Date: d']).toString()).toBe('Date: d\nFrom: a@acme.test\n\nbody\r\nline\r\n');
    expect(rewriteHead(raw, head, () => false, [])).toBe(raw);
    // The delivery path's tracking headers (compose.ts): the first line's ending, not a CRLF in the body.
    expect(prependFields(raw, ['X-T: 1']).toString()).toBe(`X-T: 1\n${raw.toString()}`);
    expect(prependFields(Buffer.from('A: 1\r\n\r\n'), ['X-T: 1']).toString()).toBe('X-T: 1\r\nA: 1\r\n\r\n');
  });

  it('a header block that does not end within 64 KiB is no head; a short message without body is all head', () => {
    const long = Buffer.from(`From: a@acme.test\r\nX-Long: ${'a'.repeat(70_000)}\r\n\r\nbody`);
    expect(readHead(long)).toBeUndefined();
    const headOnly = readHead(Buffer.from('From: a@acme.test\r\nSubject: s\r\n'));
    expect(headOnly?.fields.map((f) => f.lower)).toEqual(['from', 'subject']);
  });

  it('size limits: the plan allowance as base64 plus 64 KiB of headers and 256 KiB of bodies', () => {
    expect(submissionSizeLimit({ plan: 'free' })).toBe(327_680);
    expect(submissionSizeLimit({ plan: 'pro' })).toBe(Math.ceil((10 * 1024 * 1024) / 57) * 78 + 327_680);
    expect(SUBMISSION_MAX_SIZE).toBe(submissionSizeLimit({ plan: 'business_200k' }));
    expect(SUBMISSION_MAX_SIZE).toBe(21_851_156);
  });

  it('attachments on the parts: named, attachment-disposed or non-text leaves; blocked by name and by bytes', () => {
    const mixed = (part: string) =>
      Buffer.from(
        'From: a@acme.test\r\nContent-Type: multipart/mixed; boundary="b"\r\n\r\n' +
          `--b\r\nContent-Type: text/plain\r\n\r\nhi\r\n--b\r\n${part}\r\n--b--\r\n`,
      );
    const pdf = 'Content-Type: application/pdf; name="a.pdf"\r\nContent-Transfer-Encoding: base64\r\n\r\nJVBERi0=';
    expect(checkSubmittedAttachments('pro', mixed(pdf))).toBe(5);
    expect(() => checkSubmittedAttachments('free', mixed(pdf))).toThrow(/no attachment allowance/);
    const exe = 'Content-Type: application/octet-stream\r\nContent-Disposition: attachment; filename="x.exe"\r\n\r\nMZ';
    expect(() => checkSubmittedAttachments('pro', mixed(exe))).toThrow(/\.exe files are not accepted/);
    const sniffed = 'Content-Type: application/octet-stream\r\nContent-Transfer-Encoding: base64\r\n\r\nTVqQAAMAAAAEAAAA';
    expect(() => checkSubmittedAttachments('pro', mixed(sniffed))).toThrow(/windows executable/);
    expect(
      checkSubmittedAttachments('free', Buffer.from('From: a@acme.test\r\nContent-Type: text/html\r\n\r\n<html></html>')),
    ).toBe(0);
  });
});
