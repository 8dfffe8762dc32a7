import type { TransportFactory } from '../transport.js';
import { outboxTransport } from './outbox.js';
import { postmarkTransport } from './postmark.js';
import { resendTransport } from './resend.js';
import { sendgridTransport } from './sendgrid.js';
import { smtpTransport } from './smtp.js';

/** Providers by name. A new provider is one file exporting a TransportFactory, added here. */
export const TRANSPORTS: Readonly<Record<string, TransportFactory>> = {
  smtp: smtpTransport,
  outbox: outboxTransport,
  postmark: postmarkTransport,
  sendgrid: sendgridTransport,
  resend: resendTransport,
};
