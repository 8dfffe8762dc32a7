import { Type, type Static } from '@sinclair/typebox';
import type { Address } from './recipients.js';
import type { RenderedEmail } from './render.js';

/**
 * A rendered email as the APIs show it in JSON: the render endpoints (src/send/preview.ts) and
 * the admin message detail's stored content (src/admin/routes/message-history.ts) write it the
 * same way, so the editor's preview and the message as sent can be compared field by field.
 */

const Addresses = Type.Array(Type.String(), { description: 'Each as `address` or `"Name" <address>`' });

export const RenderedView = Type.Object({
  subject: Type.String(),
  html: Type.Union([Type.String(), Type.Null()], { description: 'null when the template has no HTML body' }),
  text: Type.Union([Type.String(), Type.Null()], { description: 'null when the template has no text body' }),
  from: Type.String({ description: '`address` or `Name <address>`' }),
  reply_to: Addresses,
  to: Addresses,
  cc: Addresses,
  bcc: Addresses,
});
export type RenderedView = Static<typeof RenderedView>;

/** Empty bodies are null (the template has none); addresses in their header form. */
export function renderedView(email: RenderedEmail): RenderedView {
  return {
    subject: email.subject,
    html: email.html === '' ? null : email.html,
    text: email.text === '' ? null : email.text,
    from: formatAddress(email.from),
    reply_to: email.reply_to.map(formatAddress),
    to: email.to.map(formatAddress),
    cc: email.cc.map(formatAddress),
    bcc: email.bcc.map(formatAddress),
  };
}

/** A display name is quoted when it holds a character that would end it in an address list. */
export function formatAddress(a: Address): string {
  if (a.name === '') return a.address;
  const name = /[",;<>@()\\]/.test(a.name) ? `"${a.name.replace(/["\\]/g, '\\$&')}"` : a.name;
  return `${name} <${a.address}>`;
}
