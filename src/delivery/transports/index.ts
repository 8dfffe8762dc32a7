import type { TransportFactory } from '../transport.js';
import { mailgunTransport } from './mailgun.js';
import { outboxTransport } from './outbox.js';
import { postmarkTransport } from './postmark.js';
import { resendTransport } from './resend.js';
import { sendgridTransport } from './sendgrid.js';
import { sesTransport } from './ses.js';
import { smtpTransport } from './smtp.js';

/** Providers by name. A new provider is one file exporting a TransportFactory, added here. */
export const TRANSPORTS: Readonly<Record<string, TransportFactory>> = {
  smtp: smtpTransport,
  outbox: outboxTransport,
  postmark: postmarkTransport,
  sendgrid: sendgridTransport,
  resend: resendTransport,
  ses: sesTransport,
  mailgun: mailgunTransport,
};
