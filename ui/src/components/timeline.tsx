import { Fragment } from 'preact';
import type { TimelineEvent } from '../api/messages';
import { formatTime } from '../lib/format';
import { timelineRows } from '../lib/timeline';
import { Badge } from './ui';

/**
 * A message's events, oldest first, as an ordered list: each with its time, type, what it
 * means, and the provider, recipient, bounce and reason when the event has them.
 */
export function Timeline(props: { events: TimelineEvent[] }) {
  const rows = timelineRows(props.events);
  if (rows.length === 0) return <p class="hint">No events recorded.</p>;
  return (
    <ol class="timeline" aria-label="Timeline, oldest first">
      {rows.map((r, i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: rows carry no id and are only ever replaced whole, in the same order.
        <li key={i} class={`timeline-item timeline-${r.type.replace(/[^a-z_]/g, '')}`}>
          <div class="timeline-head">
            <time dateTime={r.at}>{formatTime(r.at)}</time>
            <Badge value={r.type} />
            <span>{r.summary}</span>
          </div>
          <dl class="facts">
            {r.provider !== undefined && (
              <>
                <dt>Provider</dt>
                <dd>{r.provider}</dd>
              </>
            )}
            {r.recipient !== undefined && (
              <>
                <dt>Recipient</dt>
                <dd>{r.recipient}</dd>
              </>
            )}
            {r.bounce !== undefined && (
              <>
                <dt>Bounce</dt>
                <dd>{r.bounce}</dd>
              </>
            )}
            {r.reason !== undefined && (
              <>
                <dt>Reason</dt>
                <dd class="mono wrap">{r.reason}</dd>
              </>
            )}
            {r.extra.map(([k, v]) => (
              <Fragment key={k}>
                <dt>{k}</dt>
                <dd class="mono wrap">{v}</dd>
              </Fragment>
            ))}
          </dl>
        </li>
      ))}
    </ol>
  );
}
