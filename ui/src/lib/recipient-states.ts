/**
 * A recipient's delivery state (GET /v1/messages/{id}'s `recipients[].state`, src/delivery/recipients.ts)
 * in plain words, with what it means: the API's value stays the badge's tooltip, to match the docs.
 * Apart from status-labels.ts, whose words are the message's statuses: `pending` and `deferred`
 * mean other things for a message and its webhook deliveries.
 */
export const RECIPIENT_STATES: Readonly<Record<string, { label: string; means: string }>> = {
  pending: { label: 'waiting', means: 'not handed to the provider yet' },
  sent: { label: 'sent', means: 'the relay or provider accepted it for this address' },
  deferred: { label: 'retrying', means: 'refused for now; it is tried again for this address alone' },
  delivered: { label: 'delivered', means: 'the provider reported delivery' },
  bounced: { label: 'bounced', means: 'refused for good (a hard bounce suppresses the address)' },
  complained: { label: 'marked as spam', means: 'the recipient reported it as spam; the address is suppressed' },
  failed: { label: 'failed', means: 'its retries ran out, the message failed, or the provider rejected it' },
  suppressed: { label: 'dropped: suppressed', means: 'on the suppression list since the send; not sent to' },
  discarded: { label: 'not sent', means: 'the message was discarded (cancelled, or every To address suppressed)' },
};

/** The state in words and its meaning; an unknown state (a newer server) as itself. */
export const recipientState = (state: string): { label: string; means: string } =>
  RECIPIENT_STATES[state] ?? { label: state, means: '' };
