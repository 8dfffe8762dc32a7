import type { Mail } from 'nodemailer';
import { prependFields } from '../mime/head.js';
import type { Address } from '../templates/recipients.js';
import type { TrackingHeaders } from './tracking-headers.js';
import type { OutgoingEmail } from './transport.js';

export type MailOptions = Parameters<Mail['sendMail']>[0];

const formatAddress = (a: Address) => ({ name: a.name, address: a.address });

/**
 * nodemailer options for one stored email. File and URL access are off: an attachment given
 * as a `path` or `href` could otherwise read server files or fetch URLs. Every header value
 * passes through nodemailer's own encoding; nothing user-supplied goes in `prepared` headers.
 * `headers`: our own (tracking-headers.ts), prepared ASCII, never from a request.
 */
export function mailOptions(mail: OutgoingEmail, headers: TrackingHeaders = {}): MailOptions {
  const e = mail.email;
  if (mail.mime !== undefined) return submittedOptions(mail, mail.mime, headers);
  return {
    messageId: mail.headerMessageId,
    from: formatAddress(e.from),
    to: e.to.map(formatAddress),
    cc: e.cc.map(formatAddress),
    bcc: e.bcc.map(formatAddress),
    replyTo: e.reply_to.map(formatAddress),
    subject: e.subject,
    ...(e.text !== '' ? { text: e.text } : {}),
    ...(e.html !== '' ? { html: e.html } : {}),
    attachments: mail.attachments.map((a) => ({
      filename: a.filename,
      content: a.content,
      ...(a.contentType !== undefined ? { contentType: a.contentType } : {}),
    })),
    ...(Object.keys(headers).length > 0 ? { headers: { ...headers } } : {}),
    disableFileAccess: true,
    disableUrlAccess: true,
    // Only a retry owed to some recipients names its envelope: the headers stay the message's.
    ...(mail.envelopeTo !== undefined ? { envelope: { from: e.from.address, to: mail.envelopeTo } } : {}),
  };
}

/**
 * A submitted message (SMTP submission, issue 28): its bytes as they are (nodemailer's `raw`
 * builds no header: no Bcc, Message-ID or Date of its own), the service's tracking headers put
 * before them, and the envelope named, as `raw` needs one: every recipient, or those still owed it
 * on a retry. DKIM still signs the stream (the transport's `dkim` option); VERP's per-recipient
 * envelope still replaces this one (transports/smtp.ts).
 */
/**
 * A submitted message's bytes as a relay receives them: the tracking headers before the stored
 * bytes, in the message's own line ending (its first line's: SMTP's CRLF, LF for a message
 * stored without CRs). The admin API's raw source shows the same (as-composed.ts).
 */
export function submittedBytes(mime: Buffer, headers: TrackingHeaders = {}): Buffer {
  return prependFields(
    mime,
    Object.entries(headers).map(([name, h]) => `${name}: ${h.value}`),
  );
}

function submittedOptions(mail: OutgoingEmail, mime: Buffer, headers: TrackingHeaders): MailOptions {
  const e = mail.email;
  return {
    raw: submittedBytes(mime, headers),
    envelope: { from: e.from.address, to: mail.envelopeTo ?? [...e.to, ...e.cc, ...e.bcc].map((a) => a.address) },
    disableFileAccess: true,
    disableUrlAccess: true,
  };
}
