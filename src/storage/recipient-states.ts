import type { Kysely } from 'kysely';
import type { MessageStatus } from '../domain/types.js';
import { oneOf } from './columns.js';
import type { Database } from './schema.js';

/**
 * A recipient's own delivery state. `pending`: not settled apart from its message (stored rows
 * say `pending` until the recipients of a message part ways; see recipientsOf for how it reads).
 * `delivered` and `complained` come only from events after hand-off (src/events/record.ts),
 * as do `bounced` and `failed` when a provider reports them later.
 */
const SETTLED_STATES = ['sent', 'deferred', 'delivered', 'bounced', 'complained', 'failed', 'suppressed'] as const;
const RECIPIENT_STATES = ['pending', ...SETTLED_STATES] as const;
const RECIPIENT_KINDS = ['to', 'cc', 'bcc'] as const;
export type RecipientState = (typeof RECIPIENT_STATES)[number];
export type RecipientKind = (typeof RECIPIENT_KINDS)[number];

/** Checked reads of message_recipients' TEXT columns (see columns.ts). */
export const recipientStateColumn: (value: string) => RecipientState = oneOf('message_recipients.state', RECIPIENT_STATES);
export const settledStateColumn: (value: string) => (typeof SETTLED_STATES)[number] = oneOf(
  'message_recipients.state (settled)',
  SETTLED_STATES,
);
const recipientKindColumn: (value: string) => RecipientKind = oneOf('message_recipients.kind', RECIPIENT_KINDS);

/**
 * What a read shows: a stored state, or `discarded` for a recipient of a discarded message that
 * was never sent to (the message was cancelled, or every To address was suppressed). Never
 * stored: it is read from the message's status, so messages discarded before it existed read so too.
 */
export type RecipientViewState = RecipientState | 'discarded';

export interface RecipientView {
  address: string;
  kind: RecipientKind;
  state: RecipientViewState;
  reason: string | null;
}

/**
 * What a stored `pending` means once its message is final: the message's own outcome, which
 * then applied to every recipient not settled apart. Until then it is still pending.
 */
function resolvePending(status: MessageStatus): RecipientViewState {
  switch (status) {
    case 'sent':
    case 'delivered':
    case 'complained':
      return 'sent';
    case 'bounced':
      return 'bounced';
    case 'failed':
      return 'failed';
    case 'discarded':
      // Cancelled by an operator, or every To address was suppressed (those are written apart):
      // nobody got it, and nothing failed (issue 25: a cancelled message's recipients read failed).
      return 'discarded';
    default:
      return 'pending';
  }
}

/**
 * A `deferred` recipient (owed a retry) of a message cancelled while held on a service error was
 * never sent to either: it reads `discarded` with the pending ones.
 */
function shownState(stored: RecipientState, status: MessageStatus): RecipientViewState {
  if (stored === 'pending' || (stored === 'deferred' && status === 'discarded')) return resolvePending(status);
  return stored;
}

/** Each recipient of a message with its own state, To first, then Cc, then Bcc. */
export async function recipientsOf(
  db: Kysely<Database>,
  message: { id: string; status: MessageStatus },
): Promise<RecipientView[]> {
  const rows = await db
    .selectFrom('message_recipients')
    .select(['kind', 'email', 'state', 'reason'])
    .where('message_id', '=', message.id)
    .execute();
  const order: Record<string, number> = { to: 0, cc: 1, bcc: 2 };
  return rows
    .map((r) => ({
      address: r.email,
      kind: recipientKindColumn(r.kind),
      state: shownState(recipientStateColumn(r.state), message.status),
      reason: r.reason,
    }))
    .sort((a, b) => (order[a.kind] ?? 3) - (order[b.kind] ?? 3));
}
