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
 * Ids are kept only when they are plain tokens (letters, digits, `.-_@`, at most 200 characters).
 */

const SES = /^250[ -](?:2\.0\.0 )?Ok ([0-9a-f]{16}-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-[0-9a-f]{6})\s*$/i;
const QUEUED_AS = /^250[ -](?:\d\.\d\.\d+ )?Ok:? queued as <?([A-Za-z0-9][A-Za-z0-9._@-]{3,199})>?\s*$/i;

export function providerMessageIdOf(reply: string): string | undefined {
  const line = reply.trim();
  return SES.exec(line)?.[1] ?? QUEUED_AS.exec(line)?.[1];
}
