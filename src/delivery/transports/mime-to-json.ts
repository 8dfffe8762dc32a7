import type { AddressObject, ParsedMail } from 'mailparser';
import type { Address } from '../../templates/recipients.js';
import type { OutgoingEmail } from '../transport.js';

/**
 * A submitted message (SMTP submission, issue 28) for the providers that take JSON only
 * (Postmark, SendGrid, Resend: none has a raw-MIME endpoint): the bytes parsed by mailparser into
 * the fields those transports already send: subject, From, Reply-To, the bodies, the files (with
 * their content ids, for inline images), and the headers worth keeping. NOT byte-for-byte (lead's
 * decision L10): the provider composes a new MIME message, other headers are dropped, a signed
 * (S/MIME, PGP) message loses its signature. mailparser is loaded only by a process that delivers
 * such a message to such a provider.
 */

/** Headers kept beside the fields: threading, list headers, and X-… (ours, X-Mailroom-*, are gone before storage). */
const KEPT = /^(in-reply-to|references|list-unsubscribe|list-unsubscribe-post|list-id|x-(?!mailroom-).+)$/i;

const addressesOf = (field: AddressObject | AddressObject[] | undefined): Address[] =>
  (Array.isArray(field) ? field : field === undefined ? [] : [field])
    .flatMap((o) => o.value)
    .flatMap((a) => (a.group !== undefined ? a.group : [a]))
    .filter((a) => a.address !== undefined && a.address !== '')
    .map((a) => ({ name: a.name, address: a.address ?? '' }));

/**
 * The message as fields. Recipients: the envelope (the summary's `to`) in the field its headers
 * give it (To, Cc), every other envelope address as Bcc, so provider-mail.ts#recipientGroups and a
 * retry's `envelopeTo` work as for any message.
 */
export async function structuredMail(mail: OutgoingEmail): Promise<OutgoingEmail> {
  if (mail.mime === undefined) return mail;
  const { simpleParser } = await import('mailparser');
  // As submitted: no text made from HTML or HTML from text, cid: links left as they are.
  const parsed: ParsedMail = await simpleParser(mail.mime, {
    skipHtmlToText: true,
    skipTextToHtml: true,
    skipTextLinks: true,
    skipImageLinks: true,
  });
  const e = mail.email;
  const inField = (field: AddressObject | AddressObject[] | undefined) =>
    new Map(addressesOf(field).map((a) => [a.address.toLowerCase(), a]));
  const toHeader = inField(parsed.to);
  const ccHeader = inField(parsed.cc);
  const envelope = [...e.to, ...e.cc, ...e.bcc];
  const pick = (header: Map<string, Address>) =>
    envelope
      .filter((a) => header.has(a.address.toLowerCase()))
      .map((a) => ({ ...a, name: header.get(a.address.toLowerCase())?.name ?? '' }));
  const to = pick(toHeader);
  const cc = pick(ccHeader).filter((a) => !toHeader.has(a.address.toLowerCase()));
  const named = new Set([...to, ...cc].map((a) => a.address.toLowerCase()));
  const [from] = addressesOf(parsed.from);
  const { mime: _bytes, ...rest } = mail;
  return {
    ...rest,
    email: {
      subject: parsed.subject ?? e.subject,
      from: from ?? e.from,
      reply_to: addressesOf(parsed.replyTo),
      to,
      cc,
      bcc: envelope.filter((a) => !named.has(a.address.toLowerCase())),
      html: typeof parsed.html === 'string' ? parsed.html : '',
      text: parsed.text ?? '',
    },
    attachments: parsed.attachments.map((a) => ({
      filename: a.filename ?? 'attachment',
      contentType: a.contentType,
      content: a.content,
      ...(a.contentDisposition === 'inline' && a.contentId !== undefined ? { contentId: a.contentId.replace(/^<|>$/g, '') } : {}),
    })),
    extraHeaders: parsed.headerLines
      .filter((h) => KEPT.test(h.key))
      .map((h) => ({
        name: h.line.slice(0, h.line.indexOf(':')).trim(),
        value: unfolded(h.line.slice(h.line.indexOf(':') + 1)),
      })),
  };
}

const unfolded = (value: string): string => value.replace(/\r?\n(?=[ \t])/g, '').trim();

/** Message-ID and the kept headers as one object (SendGrid, Resend); a later duplicate name wins. */
export function headerObject(mail: OutgoingEmail): Record<string, string> {
  return Object.fromEntries([
    ['Message-ID', mail.headerMessageId],
    ...(mail.extraHeaders ?? []).map((h): [string, string] => [h.name, h.value]),
  ]);
}
