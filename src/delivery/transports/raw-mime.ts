import nodemailer from 'nodemailer';
import { mailOptions, type MailOptions } from '../compose.js';
import type { TrackingHeaders } from '../tracking-headers.js';
import type { OutgoingEmail } from '../transport.js';

/** One email as the raw-MIME APIs (Mailgun messages.mime, SES Content.Raw) take it. */
export interface RawMessage {
  /** The RFC 5322 bytes, CRLF line ends, exactly what an SMTP relay would receive. */
  bytes: Buffer;
  /**
   * Every address the message goes to: to, cc and bcc, or `envelopeTo` on a retry for some
   * recipients only. The bytes carry no Bcc header, so the API's envelope field is the only
   * place bcc recipients appear.
   */
  recipients: string[];
}

/**
 * What only a composition after the fact sets (the admin API's raw source, delivery/as-composed.ts):
 * the Date the message went out with and a boundary of its own, so the same message composes to
 * the same bytes every time. A delivery leaves both to nodemailer (now, random).
 */
export interface ComposeOptions {
  date?: Date;
  baseBoundary?: string;
  /** The tracking header an SMTP relay's events source reads (tracking-headers.ts); none over an API. */
  headers?: TrackingHeaders;
}

export interface RawComposer {
  compose(mail: OutgoingEmail, options?: ComposeOptions): Promise<RawMessage>;
  close(): void;
}

/**
 * nodemailer's composer, as the outbox uses it (compose.ts#mailOptions: file and URL access off).
 * No tracking headers: over an API our message id travels in the provider's own metadata field.
 * The stream transport keeps a Bcc header (keepBcc, right for the outbox's .eml files), which
 * the provider would hand every recipient: bcc recipients are taken out of the headers and put
 * in the envelope only, as an SMTP relay gets them.
 */
export function rawComposer(): RawComposer {
  const composer = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'windows' });
  return {
    async compose(mail, extra = {}) {
      const e = mail.email;
      const everyone = [...e.to, ...e.cc, ...e.bcc].map((a) => a.address);
      const options = mailOptions(mail, extra.headers);
      // baseBoundary is MailComposer's own option (mail-composer: this.mail.baseBoundary), not in the typings.
      const composed: MailOptions & { baseBoundary?: string } = {
        ...options,
        bcc: [],
        envelope: options.envelope ?? { from: e.from.address, to: everyone },
        ...(extra.date !== undefined ? { date: extra.date } : {}),
        ...(extra.baseBoundary !== undefined ? { baseBoundary: extra.baseBoundary } : {}),
      };
      const info = await composer.sendMail(composed);
      // `buffer: true` makes it a Buffer; the type also allows the stream of `buffer: false`.
      if (!Buffer.isBuffer(info.message)) throw new Error('nodemailer returned a stream where a buffer was asked for');
      return { bytes: info.message, recipients: info.envelope.to.map(String) };
    },
    close: () => composer.close(),
  };
}

/**
 * Splits envelope recipients back into the fields they came from (SES Destination), matching
 * case-insensitively; an address found in none (it cannot happen today) goes with To.
 */
export function splitRecipients(
  mail: OutgoingEmail,
  recipients: readonly string[],
): { to: string[]; cc: string[]; bcc: string[] } {
  const e = mail.email;
  const field = new Map<string, 'to' | 'cc' | 'bcc'>();
  for (const [name, list] of [
    ['bcc', e.bcc],
    ['cc', e.cc],
    ['to', e.to],
  ] as const) {
    for (const a of list) field.set(a.address.toLowerCase(), name);
  }
  const out = { to: [] as string[], cc: [] as string[], bcc: [] as string[] };
  for (const r of recipients) out[field.get(r.toLowerCase()) ?? 'to'].push(r);
  return out;
}
