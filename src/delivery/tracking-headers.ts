import { descriptorOf } from '../providers/index.js';

/**
 * Headers that make a provider echo our message id in the events it posts back (issue 12), so
 * an event finds its message even when the provider's own id did not reach us at hand-off.
 * Each provider reads its header at submission and does not pass it on to the recipient, so they
 * are added only for the provider the service's `events.source` names: through any other relay
 * they would reach the recipient's mailbox. Which header is the provider descriptor's
 * (`events.trackingHeaders`, src/providers/<name>.ts); one that reads none (Resend) matches by
 * the id in its reply or by our Message-ID. (Message ids are not secrets: reading a message's
 * status needs a key or its status token.)
 */
/**
 * Values go out as given ("prepared"): nodemailer would otherwise Q-encode the JSON ones, which
 * the providers do not decode. They are our own ASCII (msg_ ids), never request input. Header
 * names are capitalized by nodemailer (`X-Pm-Metadata-Mailroom_message_id`); the sources read
 * the echoed key case-insensitively.
 */
export type TrackingHeaders = Record<string, { prepared: true; value: string }>;

export function trackingHeaders(settings: Readonly<Record<string, unknown>>, messageId: string): TrackingHeaders {
  const raw = rawTrackingHeaders(settings, messageId);
  return Object.fromEntries(Object.entries(raw).map(([k, value]) => [k, { prepared: true as const, value }]));
}

function rawTrackingHeaders(settings: Readonly<Record<string, unknown>>, messageId: string): Record<string, string> {
  const events = settings.events;
  const source = typeof events === 'object' && events !== null && 'source' in events ? events.source : undefined;
  return descriptorOf(source)?.events?.trackingHeaders?.(messageId) ?? {};
}
