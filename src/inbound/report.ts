import { canonicalAddress } from '../domain/addresses.js';
import type { ProviderEventType } from '../events/types.js';
import { fieldBlocks, parseEntity, parseFields, walk, type Fields, type Part } from './mime.js';

/**
 * What a report says, before anyone decides whom it is about (src/inbound/handle.ts does,
 * with the VERP token): RFC 3464 delivery status notifications and RFC 5965 feedback reports,
 * in the shapes Postfix, Exim, Exchange and the mailbox providers' feedback loops send.
 */

export interface Finding {
  type: ProviderEventType;
  /** Final-Recipient / Original-Rcpt-To as the report names it, lower-cased; null when none. */
  recipient: string | null;
  /** The DSN Action or the ARF Feedback-Type, lower-cased: part of the event's dedupe key. */
  action: string;
  bounceType?: 'hard' | 'soft';
  status?: string;
  reason?: string;
}

export interface Report {
  source: 'dsn' | 'arf';
  /** The report's own Message-ID (dedupe: an MTA retrying delivery of the report sends the same one). */
  reportMessageId: string | undefined;
  findings: Finding[];
  /** Addresses that may carry our VERP token: ARF Original-Mail-From, the original's Return-Path. */
  tokenAddresses: string[];
}

/** `rfc822; <Ada@Example.org>` → `ada@example.org` (by canonicalAddress); undefined for another address type or nothing. */
export function addressOf(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const [, type, typedValue] = /^\s*([A-Za-z0-9-]+)\s*;\s*(.*)$/.exec(value) ?? [];
  if (type !== undefined && type.toLowerCase() !== 'rfc822') return undefined;
  const raw = (typedValue ?? value).trim().replace(/^<|>$/g, '').trim();
  return /^[^\s@<>]+@[^\s@<>]+$/.test(raw) ? canonicalAddress(raw) : undefined;
}

const STATUS = /^([245])\.(\d{1,3})\.(\d{1,3})$/;

/** The enhanced status code, from Status or else from the text of Diagnostic-Code ("smtp; 550 5.1.1 …"). */
function statusOf(block: Fields): string | undefined {
  const status = block.get('status')?.trim().split(/\s/)[0];
  if (status !== undefined && STATUS.test(status)) return status;
  const diag = /\b([245]\.\d{1,3}\.\d{1,3})\b/.exec(block.get('diagnostic-code') ?? '');
  return diag?.[1];
}

function diagnosticOf(block: Fields): string | undefined {
  const d = block.get('diagnostic-code');
  if (d === undefined) return undefined;
  return (
    d
      .replace(/^\s*(smtp|x-postfix|x-unix|x-local)\s*;\s*/i, '')
      .trim()
      .slice(0, 1000) || undefined
  );
}

function dsnFinding(block: Fields): Finding | undefined {
  const action = (block.get('action') ?? '').trim().toLowerCase().split(/[\s(]/)[0] ?? '';
  const status = statusOf(block);
  const reason = diagnosticOf(block);
  const recipient = addressOf(block.get('final-recipient')) ?? addressOf(block.get('original-recipient')) ?? null;
  const base = { recipient, action, ...(status !== undefined ? { status } : {}), ...(reason !== undefined ? { reason } : {}) };
  if (action === 'failed') {
    // 4.x.x after the remote gave up retrying is still a transient condition: soft.
    return { ...base, type: 'bounced', bounceType: status?.startsWith('4.') === true ? 'soft' : 'hard' };
  }
  if (action === 'delayed') return { ...base, type: 'deferred', bounceType: 'soft' };
  if (action === 'delivered' || action === 'relayed' || action === 'expanded') return { ...base, type: 'delivered' };
  return undefined;
}

/** A part's body read as an RFC 822 message's header block (message/rfc822 or text/rfc822-headers). */
function originalHeaders(part: Part): Fields {
  const text = part.body.toString('latin1');
  const end = /\r?\n\r?\n/.exec(text);
  return parseFields(end === null ? text : text.slice(0, end.index));
}

const unbracket = (v: string | undefined) => v?.trim().replace(/^<|>$/g, '').trim();

export function readReport(raw: Buffer): Report | undefined {
  const top = parseEntity(raw);
  if (top.contentType !== 'multipart/report') return undefined;
  const reportType = (top.params['report-type'] ?? '').toLowerCase();
  const parts = walk(top);
  const originals = parts
    .filter((p) => p.contentType === 'message/rfc822' || p.contentType === 'text/rfc822-headers')
    .map(originalHeaders);
  const tokenAddresses = originals.flatMap((h) => h.all('return-path').map((v) => unbracket(v) ?? ''));
  const reportMessageId = unbracket(top.headers.get('message-id'));
  if (reportType === 'delivery-status') {
    const status = parts.find(
      (p) => p.contentType === 'message/delivery-status' || p.contentType === 'message/global-delivery-status',
    );
    if (status === undefined) return undefined;
    // The first block is about the message (Reporting-MTA…), the others one recipient each.
    const [, ...recipients] = fieldBlocks(status.body);
    const findings = recipients.map(dsnFinding).filter((f): f is Finding => f !== undefined);
    return { source: 'dsn', reportMessageId, findings, tokenAddresses };
  }
  if (reportType === 'feedback-report') {
    const feedback = parts.find((p) => p.contentType === 'message/feedback-report');
    if (feedback === undefined) return undefined;
    const fields = parseFields(feedback.body.toString('utf8'));
    const feedbackType = (fields.get('feedback-type') ?? '').trim().toLowerCase();
    const mailFrom = unbracket(fields.get('original-mail-from'));
    const rcpt = fields
      .all('original-rcpt-to')
      .map((v) => addressOf(v))
      .find((a) => a !== undefined);
    const addresses = [...(mailFrom !== undefined ? [mailFrom] : []), ...tokenAddresses];
    // Abuse (and the older "complaint" some loops still send) is the user pressing "spam";
    // fraud, virus, not-spam and auth-failure reports say nothing about the recipient's wishes.
    if (feedbackType !== 'abuse' && feedbackType !== 'complaint')
      return { source: 'arf', reportMessageId, findings: [], tokenAddresses: addresses };
    const agent = fields.get('user-agent');
    return {
      source: 'arf',
      reportMessageId,
      tokenAddresses: addresses,
      findings: [
        {
          type: 'complained',
          recipient: rcpt ?? null,
          action: feedbackType,
          ...(agent !== undefined ? { reason: `feedback report (${agent.slice(0, 200)})` } : {}),
        },
      ],
    };
  }
  return undefined;
}
