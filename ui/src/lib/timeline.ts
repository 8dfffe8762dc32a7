/**
 * How the message detail shows a timeline entry and what an operator may do with a message.
 * Pure (no DOM): unit-tested in test/ui/timeline.test.ts.
 */

/** A timeline entry as the admin API returns it (src/http/routes/timeline.ts). */
export interface TimelineEntry {
  type: string;
  at: string;
  recipient?: string;
  reason?: string;
  provider?: string;
  bounce_type?: string;
  status?: string;
  details?: Record<string, unknown>;
}

/** One line of a timeline entry: what happened, and the facts worth showing beside it. */
export interface TimelineRow {
  type: string;
  at: string;
  /** A sentence for the type, e.g. "Accepted by the relay". */
  summary: string;
  provider: string | undefined;
  recipient: string | undefined;
  /** The remote's reply or diagnostic, or mailroom's own reason code. */
  reason: string | undefined;
  /** `hard bounce`, `soft bounce`, with the remote status when known (`5.1.1`). */
  bounce: string | undefined;
  /** Every other detail as `[key, text]`, for the "details" list. */
  extra: Array<[string, string]>;
}

const SUMMARIES: Readonly<Record<string, string>> = {
  queued: 'Queued for delivery',
  held: 'Held: no credits left',
  released: 'Released to the queue',
  sending: 'A worker is sending it',
  sent: 'Accepted by the relay or provider',
  deferred: 'Deferred: refused for now, retried later',
  delivered: 'Delivered',
  bounced: 'Bounced',
  complained: 'Reported as spam',
  failed: 'Failed',
  discarded: 'Discarded: will not be sent',
  held_service_error: "Held: the service's settings or credentials are broken",
};

/** Detail keys already shown in their own column (the flat fields and their stored twins). */
const SHOWN = new Set(['reason', 'recipient', 'provider', 'bounce_type', 'status', 'hard']);

/** A detail value as text: strings as they are, anything else as compact JSON. */
export function detailText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === null || value === undefined) return '—';
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

/** Flattens `extra` (a provider's fields) into `extra.<key>` entries so each gets its own line. */
function extraDetails(details: Record<string, unknown>): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const [key, value] of Object.entries(details)) {
    if (SHOWN.has(key)) continue;
    if (key === 'extra' && value !== null && typeof value === 'object' && !Array.isArray(value)) {
      for (const [k, v] of Object.entries(value as Record<string, unknown>)) out.push([`extra.${k}`, detailText(v)]);
    } else {
      out.push([key, detailText(value)]);
    }
  }
  return out;
}

export function timelineRow(e: TimelineEntry): TimelineRow {
  const d = e.details ?? {};
  const bounceType =
    e.bounce_type ?? (e.type === 'bounced' && typeof d.hard === 'boolean' ? (d.hard ? 'hard' : 'soft') : undefined);
  const bounce = bounceType === undefined ? undefined : `${bounceType} bounce${e.status !== undefined ? ` (${e.status})` : ''}`;
  return {
    type: e.type,
    at: e.at,
    summary: SUMMARIES[e.type] ?? e.type,
    provider: e.provider,
    recipient: e.recipient,
    reason: e.reason,
    bounce,
    // A status without a bounce (a delivery's 250, a deferral's 4.2.2) goes with the details.
    extra: [
      ...(bounce === undefined && e.status !== undefined ? [['status', e.status] as [string, string]] : []),
      ...extraDetails(d),
    ],
  };
}

/** Oldest first, as the server records them; entries with the same time keep their order. */
export function timelineRows(events: readonly TimelineEntry[]): TimelineRow[] {
  return events
    .map((e, i) => [e, i] as const)
    .sort(([a, i], [b, j]) => Date.parse(a.at) - Date.parse(b.at) || i - j)
    .map(([e]) => timelineRow(e));
}

/**
 * What an operator may do with a message in this status: release a message held for credits
 * (it takes one), cancel one that has not left yet (held, held on a service error, or queued).
 * A held_service_error message goes back to the queue when its service is fixed, not by release.
 */
export function messageActions(status: string): { release: boolean; cancel: boolean } {
  return {
    release: status === 'held',
    cancel: status === 'held' || status === 'held_service_error' || status === 'queued',
  };
}

/**
 * Whether a worker is about to change the message (the detail page says to reload). A `sent`
 * message may still get a provider's delivered or bounced, but maybe never: not said for it.
 */
export const isSettling = (status: string): boolean => status === 'queued' || status === 'sending';
