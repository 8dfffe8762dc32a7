import { describe, expect, it } from 'vitest';
import { parseEntity, type WalkBudget } from '../../src/inbound/mime.js';
import { readReport } from '../../src/inbound/report.js';
import { mimeParameter } from '../../src/mime/encoded-words.js';
import { checkSubmittedAttachments, submittedFiles } from '../../src/send/submitted.js';

// The attachment policy on a submitted message (src/send/submitted.ts) sees every part it
// delivers: a message the walker cannot read to the end is refused, and RFC 2231 names are read
// as mail clients show them (review A 1.1).

const crlf = (text: string): Buffer => Buffer.from(text.replace(/\r?\n/g, '\r\n'), 'latin1');
const EXE = 'Content-Type: application/octet-stream\nContent-Disposition: attachment; filename="evil.exe"\n\nhello';
const TEXT = 'Content-Type: text/plain\n\nx';

/** A multipart/mixed of these parts (each a part's header block and body). */
const mixed = (parts: readonly string[], boundary = 'b'): string =>
  `Content-Type: multipart/mixed; boundary="${boundary}"\n\n${parts.map((p) => `--${boundary}\n${p}\n`).join('')}--${boundary}--`;

/** The part nested in `levels` multiparts, the outermost being the message. */
const nested = (levels: number, part: string): string => {
  let body = part;
  for (let i = levels - 1; i >= 0; i -= 1) body = mixed([body], `n${i}`);
  return body;
};

const message = (entity: string): Buffer => crlf(`From: a@acme.test\nSubject: files\nMIME-Version: 1.0\n${entity}`);

const refusal = (mime: Buffer): { code?: string; reason?: unknown; message: string } => {
  try {
    checkSubmittedAttachments('pro', mime);
  } catch (err) {
    const e = err as { code?: string; message: string; details?: Record<string, unknown> };
    return { code: e.code, reason: e.details?.reason, message: e.message };
  }
  throw new Error('expected a refusal, and it was accepted');
};

describe('the attachment policy on a submitted message', () => {
  it('refuses an .exe as part 51 (the walker reads 50), accepts 50 harmless parts', () => {
    const fifty = Array.from({ length: 50 }, () => TEXT);
    expect(checkSubmittedAttachments('pro', message(mixed(fifty)))).toBe(0);
    expect(refusal(message(mixed([...fifty, EXE])))).toMatchObject({
      code: 'attachments_not_allowed',
      reason: 'mime_structure',
    });
  });

  it('refuses an .exe nested 6 multiparts deep; at 5 it is walked and refused by its name', () => {
    expect(refusal(message(nested(6, EXE)))).toMatchObject({ code: 'attachments_not_allowed', reason: 'mime_structure' });
    expect(refusal(message(nested(5, EXE)))).toMatchObject({ code: 'attachments_not_allowed', reason: 'file_type' });
    expect(checkSubmittedAttachments('pro', message(nested(5, TEXT)))).toBe(0);
  });

  it("reads RFC 2231 names: filename*=UTF-8''run.bat, continuations, and name* on Content-Type", () => {
    const named = (fields: string) => message(mixed([TEXT, `${fields}\n\nhello`]));
    expect(
      refusal(named("Content-Type: application/octet-stream\nContent-Disposition: attachment; filename*=UTF-8''run.bat")),
    ).toMatchObject({ code: 'attachments_not_allowed', reason: 'file_type' });
    expect(
      refusal(
        named(
          "Content-Type: application/octet-stream\nContent-Disposition: attachment;\n filename*0*=UTF-8''r%C3%A9sum%C3%A9;\n" +
            ' filename*1=".pdf";\n filename*2*=.b%61t',
        ),
      ).message,
    ).toBe('Attachment refused: résumé.pdf.bat: .bat files are not accepted.');
    expect(refusal(named("Content-Type: application/octet-stream; name*=iso-8859-1'en'caf%E9.cmd")).message).toContain(
      'café.cmd',
    );
    // The names a client shows, harmless ones too.
    const files = submittedFiles(
      named("Content-Type: application/pdf\nContent-Disposition: attachment; filename*=UTF-8''%E2%82%AC.pdf"),
    );
    expect(files.map((f) => f.name)).toEqual(['€.pdf']);
  });

  it('RFC 2231 and 2047 parameter decoding', () => {
    expect(mimeParameter({ 'filename*': "UTF-8''run.bat" }, 'filename')).toBe('run.bat');
    expect(mimeParameter({ 'filename*0': 'a', 'filename*1': 'b.txt' }, 'filename')).toBe('ab.txt');
    expect(mimeParameter({ filename: '=?UTF-8?Q?r=C3=A9sum=C3=A9.bat?=' }, 'filename')).toBe('résumé.bat');
    expect(mimeParameter({ 'filename*': "x-no-such-charset''a%41" }, 'filename')).toBe('aA');
    expect(mimeParameter({ name: 'n' }, 'filename')).toBeUndefined();
  });
});

describe('the walker says when it stopped early; the report reader is unchanged', () => {
  it('flags the part cap and the depth cap, not a message within both', () => {
    const walked = (entity: string): WalkBudget => {
      const budget: WalkBudget = { parts: 0, truncated: false };
      parseEntity(crlf(entity), 0, budget);
      return budget;
    };
    const fifty = Array.from({ length: 50 }, () => TEXT);
    expect(walked(mixed(fifty))).toEqual({ parts: 50, truncated: false });
    expect(walked(mixed([...fifty, TEXT]))).toEqual({ parts: 50, truncated: true });
    expect(walked(nested(5, TEXT)).truncated).toBe(false);
    expect(walked(nested(6, TEXT)).truncated).toBe(true);
    // A multipart without a boundary is one opaque leaf, as before: nothing unread.
    expect(walked('Content-Type: multipart/mixed\n\nbody').truncated).toBe(false);
  });

  it('a DSN after 50 other parts is still not read, with or without the flag', () => {
    const status =
      'Content-Type: message/delivery-status\n\nReporting-MTA: dns; mx\n\nFinal-Recipient: rfc822; a@b.test\nAction: failed';
    const report = (parts: readonly string[]) =>
      crlf(mixed(parts).replace('multipart/mixed;', 'multipart/report; report-type=delivery-status;'));
    expect(readReport(report([TEXT, status]))?.findings).toHaveLength(1);
    expect(readReport(report([...Array.from({ length: 50 }, () => TEXT), status]))).toBeUndefined();
  });
});
