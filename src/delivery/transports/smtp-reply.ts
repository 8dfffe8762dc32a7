/**
 * The provider's message id in an SMTP relay's final reply (the `250` to DATA), so events the
 * provider reports later can be matched to our message (issue 12). Only forms that are the
 * provider's own id are read; anything else reports none, and events are then matched by our
 * Message-ID header (which providers echo) or metadata:
 * - Amazon SES: `250 Ok <id>`, where <id> is SES's message id (16 hex digits, a UUID, 6 hex
 *   digits: `0100018c…-…-000000`), the `mail.messageId` of its SNS notifications.
 * - Postfix-style `250 2.0.0 Ok: queued as <id>` (SendGrid, and relays built on Postfix): the
 *   relay's queue id. For a provider's relay that is its id for the message (SendGrid's
 *   `sg_message_id` begins with it); for an operator's own relay it is a local queue id no event
 *   will ever name, which is harmless (matching is scoped to the service's organization).
 * - Any other `250 Ok <id>` (Resend's SMTP endpoint answers `250 OK <email id>`, a UUID, the
 *   `data.email_id` of its events), read only for a service with an `events` source (issue 25,
 *   8), the one case where a later event can name it. The id must be one token with a digit in
 *   it, 8 characters or more, so replies in words (`250 OK queued`) report none.
 * Ids are kept only when they are plain tokens (letters, digits, `.-_@`, at most 200 characters).
 */

const SES =
  /^250[ -](?:2\.0\.0 )?Ok ([0-9a-f]{16}-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-[0-9a-f]{6})\s*$/i;
const QUEUED_AS = /^250[ -](?:\d\.\d\.\d+ )?Ok:? queued as <?([A-Za-z0-9][A-Za-z0-9._@-]{3,199})>?\s*$/i;
const OK_ID = /^250[ -](?:\d\.\d\.\d+ )?Ok:? <?([A-Za-z0-9][A-Za-z0-9._@-]{7,199})>?\s*$/i;

export interface ReplyIdOptions {
  /** The service has an events source: read the general `250 Ok <id>` form too. */
  events: boolean;
}

export function providerMessageIdOf(reply: string, options: ReplyIdOptions = { events: false }): string | undefined {
  const line = reply.trim();
  const strict = SES.exec(line)?.[1] ?? QUEUED_AS.exec(line)?.[1];
  if (strict !== undefined || !options.events) return strict;
  const id = OK_ID.exec(line)?.[1];
  return id !== undefined && /\d/.test(id) ? id : undefined;
}
