/**
 * The body of an outbound webhook (issue 13): one shape, documented here and, from here, in the
 * README and the OpenAPI document's `webhooks`. Built once, at a delivery's first attempt, and
 * stored: every retry and replay sends the same bytes.
 *
 * A message event:
 * ```json
 * {
 *   "type": "message.bounced",
 *   "timestamp": "2026-01-01T12:00:03.000Z",
 *   "data": {
 *     "message_id": "msg_01HZX…",
 *     "organization_id": "acme",
 *     "template_id": "contact",
 *     "service_id": "ses",
 *     "status": "bounced",
 *     "sequence": 4,
 *     "mode": "live",
 *     "recipient": "ada@example.org",
 *     "bounce_type": "hard",
 *     "reason": "550 5.1.1 user unknown",
 *     "provider": "ses",
 *     "details": { "status": "5.1.1" }
 *   }
 * }
 * ```
 * - `timestamp`: when the event happened (not when it was sent to you).
 * - `status`: the message's status as this event left it.
 * - `sequence`: the event's rank in its message's timeline (1, 2, …): a receiver that got a
 *   higher one for the message may ignore a lower one arriving late.
 * - `mode`: `live`, or `test` for a message sent with a test key (issue 27): one set of endpoints
 *   gets both, a receiver tells them apart by this field.
 * - `recipient`, `bounce_type`, `reason`, `provider`: present when the event has them;
 *   `details`: the event's other fields (e.g. `attempt` of `message.sending`, `retry_at` of
 *   `message.deferred`, a provider's remote `status`), absent when there are none.
 *   `details.simulated: true` on every event of a message sent to a simulator address
 *   (src/testmode/simulator.ts): nothing was delivered to anyone.
 *
 * `webhook.test` (sent by `POST …/webhooks/{id}/test`):
 * ```json
 * {
 *   "type": "webhook.test",
 *   "timestamp": "2026-01-01T12:00:00.000Z",
 *   "data": { "organization_id": "acme", "endpoint_id": "wh_1" }
 * }
 * ```
 */
/**
 * The `webhook-id` of a delivery, the same on every attempt and replay: `<message_id>.<sequence>`
 * for a message event (unique per event), `alert_<n>` for an alert event (its `event_id` is
 * −n: migration 0022), `test_<n>` for a `webhook.test`.
 */
export function webhookIdOf(row: {
  id: number;
  message_id: string | null;
  sequence: number | null;
  event_id?: number | null;
}): string {
  if (row.message_id !== null && row.sequence !== null) return `${row.message_id}.${row.sequence}`;
  return row.event_id !== undefined && row.event_id !== null && row.event_id < 0 ? `alert_${-row.event_id}` : `test_${row.id}`;
}

export interface MessageEventPayload {
  type: string;
  timestamp: string;
  data: {
    message_id: string;
    organization_id: string;
    template_id: string;
    service_id: string;
    status: string;
    sequence: number;
    mode: string;
    recipient?: string;
    bounce_type?: string;
    reason?: string;
    provider?: string;
    details?: Record<string, unknown>;
  };
}

export interface TestEventPayload {
  type: 'webhook.test';
  timestamp: string;
  data: { organization_id: string; endpoint_id: string };
}

/** The event and message fields a message event's body is made of. */
export interface PayloadSource {
  eventType: string;
  at: number;
  /** The event's detail JSON as stored (null: none). */
  detail: string | null;
  messageId: string;
  orgId: string;
  templateId: string;
  serviceId: string;
  messageStatus: string;
  sequence: number;
  /** The message's mode: live | test. */
  mode: string;
  /**
   * The message went to a simulator address. Read from the message, not stamped on each event:
   * its events have many writers (claim, outcomes, reaper, the simulator's record path).
   */
  simulated: boolean;
}

/** Fields lifted to `data`'s top level; the rest of the detail goes to `details`. */
const LIFTED = ['recipient', 'bounce_type', 'reason', 'provider'] as const;

function detailObject(detail: string | null): Record<string, unknown> {
  if (detail === null) return {};
  try {
    const parsed: unknown = JSON.parse(detail);
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? { ...parsed } : {};
  } catch {
    // A detail that does not parse is left out rather than failing the delivery.
    return {};
  }
}

export function messageEventPayload(s: PayloadSource): string {
  const rest = detailObject(s.detail);
  const lifted: Partial<Record<(typeof LIFTED)[number], string>> = {};
  for (const key of LIFTED) {
    const value = rest[key];
    delete rest[key];
    if (typeof value === 'string') lifted[key] = value;
  }
  if (s.simulated) rest.simulated = true;
  const body: MessageEventPayload = {
    type: s.eventType,
    timestamp: new Date(s.at).toISOString(),
    data: {
      message_id: s.messageId,
      organization_id: s.orgId,
      template_id: s.templateId,
      service_id: s.serviceId,
      status: s.messageStatus,
      sequence: s.sequence,
      mode: s.mode,
      ...lifted,
      ...(Object.keys(rest).length > 0 ? { details: rest } : {}),
    },
  };
  return JSON.stringify(body);
}

export function testEventPayload(orgId: string, endpointId: string, at: number): string {
  const body: TestEventPayload = {
    type: 'webhook.test',
    timestamp: new Date(at).toISOString(),
    data: { organization_id: orgId, endpoint_id: endpointId },
  };
  return JSON.stringify(body);
}
