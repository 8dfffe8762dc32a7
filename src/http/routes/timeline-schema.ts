import { Type } from '@sinclair/typebox';
import { TIMELINE_EVENT_MEANINGS, TIMELINE_EVENT_TYPES } from '../../events/timeline-types.js';
import { EVENT_SOURCES, WEBHOOK_SOURCES } from '../../events/types.js';

/**
 * The OpenAPI shape of one timeline entry of GET /v1/messages/{id} (built by timelineEntry in
 * timeline.ts): every type as an enum with what it carries, every field described. Enums are
 * `type: string` with `enum`, not unions of literals: the response serializer does not check
 * an enum, so a type written by newer code never turns a read into a 500; the test of this
 * document checks instead that every type the code and the tests write is listed.
 */

const typeDescription = `What happened. Each type and the fields it carries:\n${TIMELINE_EVENT_TYPES.map(
  (t) => `- \`${t}\`: ${TIMELINE_EVENT_MEANINGS[t]}`,
).join('\n')}`;

const PROVIDER_DESCRIPTION =
  `Where an event after hand-off came from: a provider webhook (${WEBHOOK_SOURCES.join(', ')}) ` +
  'or a report mailed back to a VERP address (dsn: an RFC 3464 delivery status notification, arf: an RFC 5965 feedback report)';

/** The stored detail's keys, as the writers store them (a key appears only on the types that say so). */
const Details = Type.Object(
  {
    reason: Type.Optional(
      Type.Union([Type.String(), Type.Null()], {
        description:
          "Why: the remote's reply or diagnostic text, or mailroom's reason (see `type`); for a public key only mailroom's " +
          'own (queued, held, released)',
      }),
    ),
    attempt: Type.Optional(Type.Integer({ description: 'sending: which attempt this is (1 the first)' })),
    response: Type.Optional(Type.String({ description: "sent: the relay's final reply (private-key reads only)" })),
    recipients: Type.Optional(
      Type.Array(Type.String(), { description: 'sent: the addresses the relay accepted (private-key reads only)' }),
    ),
    provider_message_id: Type.Optional(
      Type.String({ description: "sent: the provider's id for this hand-off, when it reported one (private-key reads only)" }),
    ),
    service_id: Type.Optional(
      Type.String({ description: "sent: the service that sent it (failover may pick another than the message's)" }),
    ),
    retry_at: Type.Optional(
      Type.String({ format: 'date-time', description: 'deferred at hand-off: when the next attempt is due' }),
    ),
    hard: Type.Optional(
      Type.Boolean({ description: 'bounced at hand-off: whether the refusal was permanent (shown as `bounce_type`)' }),
    ),
    recipient: Type.Optional(
      Type.String({ description: 'The address the event is about (private-key reads only; shown as `recipient`)' }),
    ),
    provider: Type.Optional(
      Type.String({ enum: [...EVENT_SOURCES], description: 'Events after hand-off: the source (shown as `provider`)' }),
    ),
    bounce_type: Type.Optional(
      Type.String({ enum: ['hard', 'soft'], description: 'Bounces reported after hand-off (shown as `bounce_type`)' }),
    ),
    status: Type.Optional(Type.String({ description: "Events after hand-off: the remote's status code (shown as `status`)" })),
    simulated: Type.Optional(
      Type.Boolean({
        description: 'true on every event of a message sent to a simulator address (issue 27): nothing was delivered to anyone',
      }),
    ),
    extra: Type.Optional(
      Type.Object(
        {},
        {
          additionalProperties: true,
          description:
            "Events after hand-off: provider fields worth keeping (strings, numbers, booleans), e.g. SES's bounce_sub_type, " +
            'a feedback type, the recipient a DSN reported (private-key reads only)',
        },
      ),
    ),
  },
  {
    additionalProperties: true,
    description:
      'The stored detail, as before the flat fields existed (existing readers keep working). A public key sees only ' +
      'provider, bounce_type, status, hard, attempt, retry_at, simulated and the reasons it may see: no address, no remote text',
  },
);

export const TimelineEventSchema = Type.Object(
  {
    type: Type.String({ enum: [...TIMELINE_EVENT_TYPES], description: typeDescription }),
    at: Type.String({ format: 'date-time', description: 'When it happened: for events after hand-off, as their source says' }),
    recipient: Type.Optional(
      Type.String({ description: 'The recipient the event is about, when it is about one (private-key reads only)' }),
    ),
    reason: Type.Optional(
      Type.String({
        description:
          "Why: the remote's reply or diagnostic text, or mailroom's reason. A public key sees " +
          "only mailroom's own reasons (queued, held, released): a remote's text can quote addresses",
      }),
    ),
    provider: Type.Optional(Type.String({ enum: [...EVENT_SOURCES], description: PROVIDER_DESCRIPTION })),
    bounce_type: Type.Optional(
      Type.String({
        enum: ['hard', 'soft'],
        description:
          "bounced (and a DSN's delayed): hard, the address does not exist or is refused for good (suppressed); soft, a " +
          'temporary refusal',
      }),
    ),
    status: Type.Optional(Type.String({ description: "The remote's status code (e.g. 5.1.1 or 550), when known" })),
    details: Type.Optional(Details),
  },
  {
    description:
      'One entry of the timeline; the flat fields are there only when the event ' +
      'has them (and, for a public key, only those without addresses or remote text)',
  },
);
