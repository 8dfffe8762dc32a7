import { Type } from '@sinclair/typebox';
import type { MessageEvent } from '../../domain/types.js';
import { Timestamp } from '../schemas.js';
import { iso } from '../time.js';

/**
 * One entry of a message's timeline as GET /v1/messages/{id} shows it: the stored event's
 * common fields lifted to the top (recipient, reason, provider, bounce_type, status), and the
 * whole stored detail under `details` as before, so existing readers keep working.
 */
export const TimelineEvent = Type.Object({
  type: Type.String({ description: 'queued, held, released, sending, sent, deferred, delivered, bounced, complained, failed, discarded, held_service_error' }),
  at: Timestamp,
  recipient: Type.Optional(Type.String({ description: 'The recipient the event is about, when it is about one (private-key reads only)' })),
  reason: Type.Optional(Type.String({ description: "Why: the remote's reply or diagnostic text, or mailroom's reason" })),
  provider: Type.Optional(Type.String({ description: 'Where an event after hand-off came from: ses, postmark, sendgrid, mailgun, resend, dsn, arf' })),
  bounce_type: Type.Optional(Type.Union([Type.Literal('hard'), Type.Literal('soft')])),
  status: Type.Optional(Type.String({ description: "The remote's status code (e.g. 5.1.1 or 550), when known" })),
  details: Type.Optional(Type.Object({}, { additionalProperties: true })),
});

const text = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** Recipient addresses are not for a public key (a browser): it sees the rest. */
const ADDRESS_KEYS = new Set(['recipient', 'recipients']);

export function timelineEntry(e: MessageEvent, withAddresses: boolean) {
  const d = e.detail ?? {};
  // The worker's own hand-off bounce says `hard: true|false`; provider events say bounce_type.
  const bounceType = d.bounce_type === 'hard' || d.bounce_type === 'soft' ? d.bounce_type
    : e.type === 'bounced' && typeof d.hard === 'boolean' ? (d.hard ? 'hard' : 'soft') : undefined;
  const recipient = withAddresses ? text(d.recipient) : undefined;
  const reason = text(d.reason);
  const provider = text(d.provider);
  const status = text(d.status);
  const details = withAddresses ? e.detail : e.detail === null ? null : Object.fromEntries(Object.entries(e.detail).filter(([k]) => !ADDRESS_KEYS.has(k)));
  return {
    type: e.type,
    at: iso(e.at),
    ...(recipient !== undefined ? { recipient } : {}),
    ...(reason !== undefined ? { reason } : {}),
    ...(provider !== undefined ? { provider } : {}),
    ...(bounceType !== undefined ? { bounce_type: bounceType } : {}),
    ...(status !== undefined ? { status } : {}),
    ...(details !== null && Object.keys(details).length > 0 ? { details } : {}),
  };
}
