import { describe, expect, it } from 'vitest';
import type { OutgoingEmail } from '../../src/delivery/transport.js';
import { mailgunTransport } from '../../src/delivery/transports/mailgun.js';
import { postmarkTransport } from '../../src/delivery/transports/postmark.js';
import { resendTransport } from '../../src/delivery/transports/resend.js';
import { sendgridTransport } from '../../src/delivery/transports/sendgrid.js';
import { sesTransport } from '../../src/delivery/transports/ses.js';
import { closerPerTest } from '../support/cleanup.js';
import { startMailgunFake } from '../support/providers/fakes/mailgun.js';
import { startPostmark } from '../support/providers/fakes/postmark.js';
import { startResend } from '../support/providers/fakes/resend.js';
import { startSendgrid } from '../support/providers/fakes/sendgrid.js';
import { startSesFake } from '../support/providers/fakes/ses.js';
import { serviceRow } from '../support/providers/transport.js';
import { message } from '../send/submission-support.js';

// A submitted message (SMTP submission, issue 28) at each provider: SES and Mailgun take the stored
// bytes as they are; the JSON-only APIs (Postmark, SendGrid, Resend) get them parsed into their fields.

const PDF = Buffer.from('%PDF-1.7 a report\n');
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]);
const MIME = message(
  [
    'From: "App" <app@acme.test>',
    'To: Ann <ann@example.com>',
    'Cc: carl@example.com',
    'Reply-To: help@acme.test',
    'Subject: =?utf-8?Q?Gr=C3=BC=C3=9Fe?=',
    'Message-ID: <sub-1@app.acme.test>',
    'In-Reply-To: <earlier@app.acme.test>',
    'X-Custom: kept',
    'MIME-Version: 1.0',
    'Content-Type: multipart/mixed; boundary="m"',
  ],
  [
    '--m',
    'Content-Type: multipart/related; boundary="r"',
    '',
    '--r',
    'Content-Type: multipart/alternative; boundary="a"',
    '',
    '--a',
    'Content-Type: text/plain; charset=utf-8',
    '',
    'Plain text',
    '--a',
    'Content-Type: text/html; charset=utf-8',
    '',
    '<p>HTML <img src="cid:logo@acme.test"></p>',
    '--a--',
    '--r',
    'Content-Type: image/png',
    'Content-ID: <logo@acme.test>',
    'Content-Disposition: inline; filename="logo.png"',
    'Content-Transfer-Encoding: base64',
    '',
    PNG.toString('base64'),
    '--r--',
    '--m',
    'Content-Type: application/pdf; name="report.pdf"',
    'Content-Disposition: attachment; filename="report.pdf"',
    'Content-Transfer-Encoding: base64',
    '',
    PDF.toString('base64'),
    '--m--',
    '',
  ].join('\r\n'),
);

/** As the worker hands it over: the summary stored at acceptance (envelope as `to`) and the bytes. */
const MAIL: OutgoingEmail = {
  messageId: 'msg_submitted0001',
  headerMessageId: '<sub-1@app.acme.test>',
  email: {
    subject: 'Grüße',
    from: { name: 'App', address: 'app@acme.test' },
    reply_to: [],
    to: ['ann@example.com', 'carl@example.com', 'hidden@example.net'].map((address) => ({ name: '', address })),
    cc: [],
    bcc: [],
    html: '',
    text: '',
  },
  attachments: [],
  mime: MIME,
};

const CONTEXT = { dataDir: '/tmp' };

describe('a submitted message at each provider', () => {
  const closer = closerPerTest();

  it('SES: Content.Raw is the stored bytes, every envelope recipient in Destination', async () => {
    const creds = { accessKeyId: 'AKIAMAILROOMTEST0001', secretAccessKey: 'secret/EXAMPLEKEY', region: 'eu-west-1' };
    const fake = await startSesFake(creds, closer);
    const settings = {
      ses: {
        region: creds.region,
        access_key_id: creds.accessKeyId,
        secret_access_key: creds.secretAccessKey,
        endpoint: fake.url,
      },
    };
    const transport = sesTransport(serviceRow('ses', settings), CONTEXT);
    closer.defer(() => transport.close());
    await transport.send(MAIL);
    expect(fake.received[0]?.mime.equals(MIME)).toBe(true);
    expect(fake.received[0]?.body.Destination?.ToAddresses).toEqual([
      'ann@example.com',
      'carl@example.com',
      'hidden@example.net',
    ]);
  });

  it('Mailgun: messages.mime is the stored bytes, every envelope recipient a `to` field', async () => {
    const account = { domain: 'mg.acme.test', apiKey: 'key-mailroom-test-0001' };
    const fake = await startMailgunFake(account, closer);
    const transport = mailgunTransport(
      serviceRow('mailgun', { mailgun: { domain: account.domain, api_key: account.apiKey, endpoint: fake.url } }),
      CONTEXT,
    );
    closer.defer(() => transport.close());
    const receipt = await transport.send(MAIL);
    expect(fake.requests).toEqual([{ method: 'POST', path: '/v3/mg.acme.test/messages.mime', status: 200 }]);
    expect(fake.received[0]?.mime.equals(MIME)).toBe(true);
    expect(fake.received[0]?.to).toEqual(['ann@example.com', 'carl@example.com', 'hidden@example.net']);
    expect(fake.received[0]?.variables).toEqual({ mailroom_message_id: 'msg_submitted0001' });
    expect(receipt.providerMessageId).toBe('sub-1@app.acme.test');
  });

  it('Postmark: subject, bodies, recipients by header, attachments with the inline content id, headers', async () => {
    const fake = await startPostmark();
    closer.defer(() => fake.close());
    const transport = postmarkTransport(
      serviceRow('postmark', { postmark: { server_token: fake.token, endpoint: fake.url } }),
      CONTEXT,
    );
    closer.defer(() => transport.close());
    await transport.send(MAIL);
    const json = fake.sent[0]?.json ?? {};
    expect(json).toMatchObject({
      From: '"App" <app@acme.test>',
      To: '"Ann" <ann@example.com>',
      Cc: 'carl@example.com',
      Bcc: 'hidden@example.net',
      ReplyTo: 'help@acme.test',
      Subject: 'Grüße',
      TextBody: 'Plain text',
      HtmlBody: '<p>HTML <img src="cid:logo@acme.test"></p>',
    });
    expect(json.Headers).toEqual([
      { Name: 'Message-ID', Value: '<sub-1@app.acme.test>' },
      { Name: 'In-Reply-To', Value: '<earlier@app.acme.test>' },
      { Name: 'X-Custom', Value: 'kept' },
    ]);
    expect(fake.sent[0]?.attachments.map((a) => [a.name, a.contentType, a.content.toString('hex')])).toEqual([
      ['logo.png', 'image/png', PNG.toString('hex')],
      ['report.pdf', 'application/pdf', PDF.toString('hex')],
    ]);
    expect((json.Attachments as Array<{ ContentID?: string }>).map((a) => a.ContentID)).toEqual([
      'cid:logo@acme.test',
      undefined,
    ]);
  });

  it('SendGrid: personalizations by header, content, inline and attached files, headers', async () => {
    const fake = await startSendgrid();
    closer.defer(() => fake.close());
    const transport = sendgridTransport(serviceRow('sendgrid', { sendgrid: { api_key: fake.key, endpoint: fake.url } }), CONTEXT);
    closer.defer(() => transport.close());
    await transport.send(MAIL);
    const json = fake.sent[0]?.json ?? {};
    expect(json).toMatchObject({
      personalizations: [
        {
          to: [{ email: 'ann@example.com', name: 'Ann' }],
          cc: [{ email: 'carl@example.com' }],
          bcc: [{ email: 'hidden@example.net' }],
        },
      ],
      subject: 'Grüße',
      content: [
        { type: 'text/plain', value: 'Plain text' },
        { type: 'text/html', value: '<p>HTML <img src="cid:logo@acme.test"></p>' },
      ],
      headers: { 'Message-ID': '<sub-1@app.acme.test>', 'In-Reply-To': '<earlier@app.acme.test>', 'X-Custom': 'kept' },
    });
    expect(json.attachments).toMatchObject([
      { filename: 'logo.png', type: 'image/png', disposition: 'inline', content_id: 'logo@acme.test' },
      { filename: 'report.pdf', type: 'application/pdf', disposition: 'attachment' },
    ]);
    expect(fake.sent[0]?.attachments.map((a) => a.content.toString('hex'))).toEqual([PNG.toString('hex'), PDF.toString('hex')]);
  });

  it('Resend: fields, headers and files', async () => {
    const fake = await startResend();
    closer.defer(() => fake.close());
    const transport = resendTransport(serviceRow('resend', { resend: { api_key: fake.key, endpoint: fake.url } }), CONTEXT);
    closer.defer(() => transport.close());
    await transport.send(MAIL);
    const json = fake.sent[0]?.json ?? {};
    expect(json).toMatchObject({
      from: '"App" <app@acme.test>',
      to: ['"Ann" <ann@example.com>'],
      cc: ['carl@example.com'],
      bcc: ['hidden@example.net'],
      reply_to: ['help@acme.test'],
      subject: 'Grüße',
      text: 'Plain text',
      html: '<p>HTML <img src="cid:logo@acme.test"></p>',
      headers: { 'Message-ID': '<sub-1@app.acme.test>', 'In-Reply-To': '<earlier@app.acme.test>', 'X-Custom': 'kept' },
    });
    expect(json.attachments).toMatchObject([{ filename: 'logo.png', content_id: 'logo@acme.test' }, { filename: 'report.pdf' }]);
    expect(fake.sent[0]?.attachments.map((a) => a.content.toString('hex'))).toEqual([PNG.toString('hex'), PDF.toString('hex')]);
  });
});
