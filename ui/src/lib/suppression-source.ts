/**
 * Why an address is on the suppression list, in words. The server gives `source` (manual,
 * hard_bounce, complaint, …) derived from the stored reason; an older server gives only
 * `reason`, which holds the same words. Pure: unit-tested in test/ui/suppression-source.test.ts.
 */
const LABELS: Readonly<Record<string, string>> = {
  manual: 'Added by an operator',
  hard_bounce: 'Hard bounce',
  bounce: 'Hard bounce',
  complaint: 'Spam complaint',
  config: 'Configuration file',
};

/** The source word: `source` when given, else the reason's first word (`hard_bounce: 550 …` → hard_bounce). */
export function suppressionSource(entry: { source?: string | null; reason: string }): string {
  if (entry.source !== undefined && entry.source !== null && entry.source !== '') return entry.source;
  const word = /^[a-z_]+/.exec(entry.reason.trim().toLowerCase());
  return word?.[0] ?? 'manual';
}

export function sourceLabel(source: string): string {
  return LABELS[source] ?? source.replace(/_/g, ' ');
}

/** The reason when it says more than the source does (a remote's diagnostic), else undefined. */
export function reasonBeyondSource(entry: { source?: string | null; reason: string }): string | undefined {
  const r = entry.reason.trim();
  return r === '' || r === suppressionSource(entry) ? undefined : r;
}
