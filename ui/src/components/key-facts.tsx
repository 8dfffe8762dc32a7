import type { ApiKey } from '../api/keys';
import { formatAge, formatTime } from '../lib/format';

/** Who made a key, in words (the admin API's `created_by`). */
const CREATORS: Record<NonNullable<ApiKey['created_by']>, string> = {
  admin: 'admin API or UI',
  config: 'config file',
  cli: 'command line',
  bootstrap: 'demo setup',
};

export const creatorLabel = (by: ApiKey['created_by']): string => (by === null ? 'unknown' : CREATORS[by]);

export const scopeLabel = (scope: ApiKey['scope']): string => (scope === 'send_only' ? 'Send only' : 'Full access');

/**
 * When a key last authenticated a request, relative and exact: "12 min ago" over
 * "2026-11-29 14:02:00 UTC". The server writes it at most once a minute per key, so anything under
 * a minute reads "within the last minute"; null reads "never".
 */
export function LastUsed(props: { at: string | null; now: number }) {
  if (props.at === null) return <span class="hint">never</span>;
  const seconds = (props.now - Date.parse(props.at)) / 1000;
  const relative = seconds < 60 ? 'within the last minute' : `${formatAge(seconds)} ago`;
  return (
    <span class="key-last-used">
      <time dateTime={props.at}>{relative}</time>
      <small class="hint">{formatTime(props.at)}</small>
    </span>
  );
}
