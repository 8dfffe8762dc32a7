import { createHash } from 'node:crypto';
import { openVerpToken, recipientDigest, splitVerpAddress, type VerpTarget } from '../delivery/verp.js';
import type { ProviderEvent } from '../events/types.js';
import { isAutoReply } from './autoreply.js';
import { parseFields } from './mime.js';
import { readReport, type Finding } from './report.js';

/**
 * One mail that reached a bounce address or complaint address → the events it proves, or the
 * reason it proves nothing. Nothing is believed without a VERP token whose MAC holds: the
 * token names the message and the recipient it was sent to in that SMTP transaction, so a
 * forged report can neither invent a message nor suppress an address it names itself.
 */

export interface InboundDeps {
  secret: string;
  /** The message's recipients as accepted (lower-cased); undefined when there is no such message. */
  recipientsOf(messageId: string): Promise<readonly string[] | undefined>;
  /** Stores and applies the events durably (recordProviderEvents); throws on a storage error. */
  record(events: ProviderEvent[]): Promise<void>;
  now(): number;
}

export type DropReason = 'auto_reply' | 'not_a_report' | 'no_token' | 'bad_token' | 'no_finding';

export type InboundOutcome = { kind: 'recorded'; events: ProviderEvent[] } | { kind: 'dropped'; reason: DropReason };

const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');

/** The first token among the addresses whose MAC holds; 'forged' when tokens were there but none held. */
export function findToken(secret: string, addresses: readonly string[]): VerpTarget | 'forged' | undefined {
  let seen = false;
  for (const address of addresses) {
    const split = splitVerpAddress(address);
    if (split === undefined) continue;
    seen = true;
    const opened = openVerpToken(secret, split.token);
    if (opened !== undefined) return opened;
  }
  return seen ? 'forged' : undefined;
}

export async function handleInbound(deps: InboundDeps, raw: Buffer, rcptTo: readonly string[]): Promise<InboundOutcome> {
  const report = readReport(raw);
  if (report === undefined) {
    const head = /\r?\n\r?\n/.exec(raw.toString('latin1'));
    const headers = parseFields(raw.toString('latin1', 0, head === null ? raw.length : head.index));
    return { kind: 'dropped', reason: isAutoReply(headers) ? 'auto_reply' : 'not_a_report' };
  }
  // The RCPT address first (a bounce comes back to the envelope sender); for a complaint
  // address, the token in the report's Original-Mail-From or the original's Return-Path.
  const target = findToken(deps.secret, [...rcptTo, ...report.tokenAddresses]);
  if (target === undefined) return { kind: 'dropped', reason: 'no_token' };
  if (target === 'forged') return { kind: 'dropped', reason: 'bad_token' };
  if (report.findings.length === 0) return { kind: 'dropped', reason: 'no_finding' };

  let known: readonly string[] | undefined | null = null;
  const tokenRecipient = async (): Promise<string | null> => {
    if (known === null) known = await deps.recipientsOf(target.messageId);
    return known?.find((r) => recipientDigest(r).equals(target.recipientDigest)) ?? null;
  };
  const reportKey = report.reportMessageId ?? sha256(raw);
  const at = deps.now();
  const events = new Map<string, ProviderEvent>();
  for (const f of report.findings) {
    // The report's own recipient when it is the token's; otherwise (forwarding, aliases, a
    // redacted feedback report, no Final-Recipient at all) the one the token was made for.
    const named = f.recipient !== null && recipientDigest(f.recipient).equals(target.recipientDigest);
    const recipient = named ? f.recipient : await tokenRecipient();
    const key = `${recipient ?? ''}\n${f.type}`;
    if (!events.has(key)) events.set(key, eventOf(report.source, f, recipient, target.messageId, reportKey, at));
  }
  const list = [...events.values()];
  await deps.record(list);
  return { kind: 'recorded', events: list };
}

function eventOf(
  source: 'dsn' | 'arf',
  f: Finding,
  recipient: string | null,
  messageId: string,
  reportKey: string,
  at: number,
): ProviderEvent {
  return {
    source,
    eventKey: sha256(`${reportKey}\n${recipient ?? ''}\n${f.action}`),
    type: f.type,
    at,
    recipient,
    ...(f.bounceType !== undefined ? { bounceType: f.bounceType } : {}),
    ...(f.status !== undefined ? { status: f.status } : {}),
    ...(f.reason !== undefined ? { reason: f.reason } : {}),
    match: { messageId },
    ...(f.recipient !== null && f.recipient !== recipient ? { extra: { reported_recipient: f.recipient } } : {}),
  };
}
