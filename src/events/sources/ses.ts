import { ApiError } from '../../errors/api-error.js';
import { IntakeMalformed, IntakeRejected, type ProviderEvent, type WebhookSourceHandler } from '../types.js';
import { readSnsMessage, snsVerifier, type SnsMessage, type SnsVerifierOptions } from './sns-verify.js';
import { isRecord, lower, ourMessageId, str, timeOf, trimmed } from './wire.js';

/**
 * Amazon SES events, delivered by SNS to the service's events URL. Verification is SNS's
 * (sns-verify.ts), plus the optional `topic_arns` allowlist, checked before any certificate is
 * fetched. The SNS `Message` holds one SES record in either format: notifications
 * (`notificationType`) or event publishing (`eventType`). A record may name several
 * recipients: one event each, keyed by the SNS MessageId and the recipient, so a retried SNS
 * delivery dedupes and the recipients stay distinct. SNS timestamps get no freshness window:
 * SNS retries an HTTP endpoint for hours, and a replayed message is at worst a duplicate.
 */

function topicAllowed(settings: Readonly<Record<string, unknown>>, topicArn: string): boolean {
  const list = settings.topic_arns;
  // Absent or empty: any topic (the service config documents "none: any topic").
  if (list === undefined || list === null || (Array.isArray(list) && list.length === 0)) return true;
  // Something unreadable allows nothing rather than everything: a restriction was meant.
  const arns = Array.isArray(list) ? list.filter((v): v is string => typeof v === 'string') : [];
  return arns.includes(topicArn);
}

const header = (mail: Record<string, unknown>, name: string): string | undefined => {
  if (!Array.isArray(mail.headers)) return undefined;
  for (const h of mail.headers) {
    if (isRecord(h) && typeof h.name === 'string' && h.name.toLowerCase() === name) return str(h.value);
  }
  return undefined;
};

/** Our message id from SES message tags (event publishing: `{name: [value]}`) or our header. */
function ourId(mail: Record<string, unknown>): string | undefined {
  const tags = isRecord(mail.tags) ? mail.tags : {};
  const tagged = Object.fromEntries(Object.entries(tags).map(([k, v]) => [k, Array.isArray(v) ? v[0] : v]));
  return ourMessageId(tagged) ?? ourMessageId({ mailroom_message_id: header(mail, 'x-mailroom-message-id') });
}

/** SES lists recipients as `{emailAddress, …}` objects, except `delivery.recipients` (plain strings). */
const recipientsOf = (list: unknown, plainStrings = false): Array<Record<string, unknown>> =>
  (Array.isArray(list) ? list : []).map((r: unknown) => (plainStrings ? { emailAddress: r } : r)).filter(isRecord);

/** One SES record (the SNS Message, parsed) → events. Unknown kinds (Send, Open, …) → none. */
export function parseSes(record: unknown, snsMessageId: string, now: number): ProviderEvent[] {
  if (!isRecord(record) || !isRecord(record.mail)) throw new IntakeMalformed('The SNS Message is not an SES event.');
  const kind = str(record.eventType) ?? str(record.notificationType);
  const mail = record.mail;
  const providerMessageId = str(mail.messageId);
  const headerMessageId =
    (isRecord(mail.commonHeaders) ? str(mail.commonHeaders.messageId) : undefined) ?? header(mail, 'message-id');
  const messageId = ourId(mail);
  const match: ProviderEvent['match'] = {
    ...(messageId === undefined ? {} : { messageId }),
    ...(providerMessageId === undefined ? {} : { providerMessageId }),
    ...(headerMessageId === undefined ? {} : { headerMessageId }),
  };
  const base = (detail: unknown, recipient: string | null) => ({
    source: 'ses' as const,
    eventKey: `${snsMessageId}:${recipient ?? '*'}`,
    at: timeOf(isRecord(detail) ? detail.timestamp : undefined, now, timeOf(mail.timestamp, now)),
    recipient,
    match,
  });

  switch (kind) {
    case 'Delivery': {
      const d = isRecord(record.delivery) ? record.delivery : {};
      return recipientsOf(d.recipients, true).map((r) => ({
        ...base(d, lower(r.emailAddress)),
        type: 'delivered' as const,
        reason: trimmed(d.smtpResponse),
        extra: { event: kind, reporting_mta: str(d.reportingMTA) ?? null },
      }));
    }
    case 'Bounce': {
      const b = isRecord(record.bounce) ? record.bounce : {};
      const sesType = str(b.bounceType) ?? null;
      return recipientsOf(b.bouncedRecipients).map((r) => ({
        ...base(b, lower(r.emailAddress)),
        type: 'bounced' as const,
        // Permanent = hard; Transient and Undetermined (SES could not tell) = soft.
        bounceType: sesType === 'Permanent' ? ('hard' as const) : ('soft' as const),
        status: str(r.status) ?? null,
        reason: trimmed(r.diagnosticCode),
        extra: {
          event: kind,
          bounce_type: sesType,
          bounce_subtype: str(b.bounceSubType) ?? null,
          feedback_id: str(b.feedbackId) ?? null,
        },
      }));
    }
    case 'Complaint': {
      const c = isRecord(record.complaint) ? record.complaint : {};
      return recipientsOf(c.complainedRecipients).map((r) => ({
        ...base(c, lower(r.emailAddress)),
        type: 'complained' as const,
        extra: { event: kind, feedback_type: str(c.complaintFeedbackType) ?? null, feedback_id: str(c.feedbackId) ?? null },
      }));
    }
    case 'DeliveryDelay': {
      const d = isRecord(record.deliveryDelay) ? record.deliveryDelay : {};
      return recipientsOf(d.delayedRecipients).map((r) => ({
        ...base(d, lower(r.emailAddress)),
        type: 'deferred' as const,
        status: str(r.status) ?? null,
        reason: trimmed(r.diagnosticCode),
        extra: { event: kind, delay_type: str(d.delayType) ?? null },
      }));
    }
    case 'Reject': {
      // SES refused the whole message (e.g. a virus): about no one recipient in particular.
      const r = isRecord(record.reject) ? record.reject : {};
      return [{ ...base(r, null), type: 'failed', reason: trimmed(r.reason), extra: { event: kind } }];
    }
    default:
      return [];
  }
}

function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new IntakeMalformed(`${what} is not JSON.`);
  }
}

/**
 * Confirms a subscription by fetching its SubscribeURL. A failure is 503 (the spec's envelope):
 * SNS then sends the confirmation again, and nothing was stored that could be lost.
 */
async function confirm(fetchText: (url: URL) => Promise<string>, url: URL): Promise<void> {
  try {
    await fetchText(url);
  } catch (err) {
    throw new ApiError('service_unavailable', {
      message:
        `The SNS subscription could not be confirmed ` +
        `(${err instanceof Error ? err.message : String(err)}); SNS will send the confirmation again.`,
    });
  }
}

export function sesSource(options: SnsVerifierOptions): WebhookSourceHandler {
  const sns = snsVerifier(options);
  return {
    source: 'ses',
    async verifyAndParse(request, settings, now) {
      // Until the signature checks, an unreadable body is just unverifiable: 401, not 400.
      let body: unknown;
      try {
        body = JSON.parse(request.rawBody.toString('utf8')) as unknown;
      } catch {
        throw new IntakeRejected('the body is not an SNS message');
      }
      const message: SnsMessage = readSnsMessage(body);
      const typeHeader = request.headers['x-amz-sns-message-type'];
      if (typeHeader !== undefined && typeHeader !== message.Type)
        throw new IntakeRejected('x-amz-sns-message-type disagrees with the body');
      if (!topicAllowed(settings, message.TopicArn)) throw new IntakeRejected('TopicArn is not in events.topic_arns');
      await sns.verify(message, now);

      if (message.Type === 'UnsubscribeConfirmation') return { events: [] };
      if (message.Type === 'SubscriptionConfirmation') {
        const url = sns.allowed(message.SubscribeURL ?? '');
        if (url === undefined) throw new IntakeRejected('SubscribeURL is not on an allowed host');
        return { events: [], followUp: () => confirm(sns.fetchText, url) };
      }
      return { events: parseSes(parseJson(message.Message, 'The SNS Message'), message.MessageId, now) };
    },
  };
}
