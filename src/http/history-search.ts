import { Type, type Static } from '@sinclair/typebox';
import { canonicalAddress } from '../domain/addresses.js';
import type { HistoryFilter } from '../storage/history.js';
import { HistoryQuery, textFilter } from './history-query.js';

/**
 * The operator UI's search of the message list (issue 29), on top of GET /v1/history's filters:
 * part of a recipient, part of the subject, one message id. Admin API only: the spec's
 * GET /v1/history has a fixed query (its `q` is the exact recipient) and stays as it is.
 */
export const HistorySearch = Type.Object({
  recipient: Type.Optional(Type.String({ maxLength: 254, description: 'Part of a recipient address (to, cc or bcc), any case' })),
  subject: Type.Optional(Type.String({ maxLength: 998, description: 'Part of the subject, any case (every alphabet)' })),
  message_id: Type.Optional(
    Type.String({
      maxLength: 256,
      description: 'One message id, exactly as pasted (surrounding whitespace trimmed; ids are case-sensitive)',
    }),
  ),
});
export type HistorySearch = Static<typeof HistorySearch>;

/** The admin list's query: GET /v1/history's and the search. */
export const AdminHistoryQuery = Type.Composite([HistoryQuery, HistorySearch]);
export type AdminHistoryQuery = Static<typeof AdminHistoryQuery>;

/**
 * The search's part of a storage filter. Empty (or blank) fields search nothing. The recipient
 * part is folded as addresses are stored (canonicalAddress: NFC, lower-case); the subject part
 * goes as typed (NFC) and the database folds both sides; the id is never folded, only trimmed,
 * and an id no message has is an empty list, like any filter that matches nothing.
 */
export function searchFilter(s: HistorySearch): Pick<HistoryFilter, 'recipientContains' | 'subjectContains' | 'messageId'> {
  const out: Pick<HistoryFilter, 'recipientContains' | 'subjectContains' | 'messageId'> = {};
  const recipient = s.recipient === undefined ? '' : textFilter('recipient', s.recipient.trim());
  // A whole address with an IDN domain (`zoë@exämple.com`) meets its stored A-label form.
  if (recipient !== '')
    out.recipientContains = recipient.includes('@') ? canonicalAddress(recipient) : recipient.normalize('NFC').toLowerCase();
  const subject = s.subject === undefined ? '' : textFilter('subject', s.subject.trim());
  if (subject !== '') out.subjectContains = subject.normalize('NFC');
  const id = s.message_id === undefined ? '' : textFilter('message_id', s.message_id.trim());
  if (id !== '') out.messageId = id;
  return out;
}
