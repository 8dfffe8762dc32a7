import './alerts.css';
import { alertsApi, type AlertEventItem, type OpenAlert } from '../api/alerts';
import { formatTime } from '../lib/format';
import { href } from '../lib/route-match';
import { useLoad } from './use-load';

const KIND_LABELS: Record<string, string> = {
  bounce_rate: 'Bounce rate',
  complaint_rate: 'Complaint rate',
  breaker_open: 'Circuit breaker open',
  endpoint_disabled: 'Webhook endpoint disabled',
};

/** What an alert is about, in words: the rate measured, or the service or endpoint. */
function about(a: OpenAlert | AlertEventItem): string {
  if (a.rate !== undefined) {
    const r = a.rate;
    return `${r.percent} % (${r.count} of ${r.sample} in ${r.window_hours} h; threshold ${r.threshold_percent} %)`;
  }
  const what =
    a.service_id !== undefined ? `service ${a.service_id}` : a.endpoint_id !== undefined ? `endpoint ${a.endpoint_id}` : '';
  return a.reason !== undefined ? `${what}: ${a.reason}` : what;
}

/**
 * The organization's alerts at the top of its overview (issue 29): those firing now, then the
 * latest events; nothing at all while it never had one. Loaded on its own, so a failure here
 * never hides the overview's counts.
 */
export function AlertSummary(props: { org: string }) {
  const { data } = useLoad(() => alertsApi.events(props.org, 5), [props.org]);
  if (data === undefined || (data.open.length === 0 && data.items.length === 0)) return null;
  return (
    <section class={`card alert-summary${data.open.length > 0 ? ' is-firing' : ''}`} aria-labelledby="alerts-h">
      <div class="alert-summary-head">
        <h2 id="alerts-h">{data.open.length > 0 ? `Alerts firing (${data.open.length})` : 'No alerts firing'}</h2>
        <a href={href('orgs', props.org, 'settings')}>Alert settings</a>
      </div>
      {data.open.length > 0 && (
        <ul class="alert-list">
          {data.open.map((a) => (
            <li key={a.alert_id}>
              <strong>{KIND_LABELS[a.kind] ?? a.kind}</strong> <span class="alert-about">{about(a)}</span>{' '}
              <span class="hint">since {formatTime(a.since)}</span>
            </li>
          ))}
        </ul>
      )}
      {data.items.length > 0 && (
        <details class="alert-recent" open={data.open.length === 0}>
          <summary>Recent alert events</summary>
          <ul class="alert-list">
            {data.items.map((e) => (
              <li key={e.alert_id}>
                <span class={`badge badge-${e.state === 'firing' ? 'failed' : 'delivered'}`}>{e.state}</span>{' '}
                <strong>{KIND_LABELS[e.kind] ?? e.kind}</strong> <span class="alert-about">{about(e)}</span>{' '}
                <span class="hint">{formatTime(e.at)}</span>
              </li>
            ))}
          </ul>
        </details>
      )}
    </section>
  );
}
