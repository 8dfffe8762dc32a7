import { describe, expect, it } from 'vitest';
import { parseContentType, parseEntity, walk } from '../../src/inbound/mime.js';
import { addressOf, readReport } from '../../src/inbound/report.js';

const crlf = (s: string) => Buffer.from(s.replace(/\r?\n/g, '\r\n'));

describe('the report MIME walker on untrusted input', () => {
  it('never throws on malformed mail; it just finds no report', () => {
    const inputs = [
      '',
      '\r\n\r\n',
      'no headers at all',
      'Content-Type: multipart/report\r\n\r\n--x\r\n',
      'Content-Type: multipart/report; report-type=delivery-status; ' +
        'boundary="unclosed\r\n\r\n--unclosed\r\nContent-Type: message/delivery-status\r\n\r\nAction: failed',
      'Content-Type: multipart/report; report-type=delivery-status; boundary=b\r\n\r\n--b\r\nContent-Transfer-Encoding: ' +
        'base64\r\nContent-Type: message/delivery-status\r\n\r\n!!!not base64***\r\n--b--',
      'Content-Type: multipart/report; report-type=feedback-report; ' +
        'boundary="(.*)+"\r\n\r\n--(.*)+\r\nContent-Type: message/feedback-report\r\n\r\nFeedback-Type: abuse\r\n--(.*)+--',
    ];
    for (const raw of inputs) expect(() => readReport(crlf(raw))).not.toThrow();
  });

  it('nesting deeper than 5 levels and more than 50 parts are cut off', () => {
    let body = 'innermost';
    for (let i = 0; i < 20; i++) body = `Content-Type: multipart/mixed; boundary=b${i}\r\n\r\n--b${i}\r\n${body}\r\n--b${i}--`;
    expect(walk(parseEntity(Buffer.from(body))).length).toBeLessThanOrEqual(7);
    const many =
      `Content-Type: multipart/mixed; ` +
      `boundary=m\r\n\r\n${Array.from({ length: 200 }, () => '--m\r\nContent-Type: text/plain\r\n\r\nx\r\n').join('')}--m--`;
    expect(parseEntity(Buffer.from(many)).parts.length).toBe(50);
  });

  it('reads quoted and unquoted parameters, and rfc822 addresses only', () => {
    expect(parseContentType('Multipart/Report; report-type="delivery-status"; boundary=abc')).toEqual({
      type: 'multipart/report',
      params: { 'report-type': 'delivery-status', boundary: 'abc' },
    });
    expect(addressOf('rfc822; <Ada@Example.ORG>')).toBe('ada@example.org');
    expect(addressOf('x400; c=us;a=;p=x')).toBeUndefined();
    expect(addressOf('rfc822; not an address')).toBeUndefined();
  });

  it('a base64 delivery-status with a delivered action is a delivery', () => {
    const status = Buffer.from(
      'Reporting-MTA: dns; mx.example\r\n\r\nFinal-Recipient: rfc822; ada@example.org\r\nAction: delivered\r\nStatus: 2.0.0\r\n',
    ).toString('base64');
    const raw = crlf(
      `Message-ID: <r1@mx.example>\nContent-Type: multipart/report; ` +
        `report-type=delivery-status; boundary=z\n\n--z\nContent-Type: ` +
        `text/plain\n\nok\n--z\nContent-Type: message/delivery-status\nContent-Transfer-Encoding: base64\n\n${status}\n--z--\n`,
    );
    expect(readReport(raw)).toMatchObject({
      source: 'dsn',
      reportMessageId: 'r1@mx.example',
      findings: [{ type: 'delivered', recipient: 'ada@example.org', status: '2.0.0', action: 'delivered' }],
    });
  });
});
