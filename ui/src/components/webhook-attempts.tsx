import { Fragment } from 'preact';
import { SECRET_MASK } from '../../../src/providers/schema.js';
import type { WebhookDelivery } from '../api/webhooks';
import { formatTime } from '../lib/format';

/**
 * What a webhook delivery sent and got back (issue 29): each attempt (time, HTTP status or the
 * network error, duration, the answer's first 1 KB, the request headers as sent with custom
 * values masked) and the JSON body, the same bytes on every attempt. Everything is text: the
 * body and answers come from outside and are rendered escaped, never as HTML.
 */

/** The body pretty-printed when it is JSON (it always is when mailroom built it), else as stored. */
export function prettyBody(body: string): string {
  try {
    return JSON.stringify(JSON.parse(body), null, 2);
  } catch {
    return body;
  }
}

/** The headers one attempt sent: signature headers in full, custom values as "hidden". */
function SentHeaders(props: { headers: Record<string, string> | null; label: string }) {
  if (props.headers === null) return <span class="hint">not logged</span>;
  return (
    <details class="sent-headers">
      <summary>
        Request headers<span class="visually-hidden"> of {props.label}</span>
      </summary>
      <dl class="facts">
        {Object.entries(props.headers).map(([name, value]) => (
          <Fragment key={name}>
            <dt class="mono">{name}</dt>
            <dd class="mono">{value === SECRET_MASK ? <span class="hint">hidden (write-only)</span> : value}</dd>
          </Fragment>
        ))}
      </dl>
    </details>
  );
}

/** One delivery's attempts: time, status or error, duration, the answer's first bytes, the headers sent. */
export function Attempts(props: { d: WebhookDelivery }) {
  if (props.d.log.length === 0)
    return (
      <p class="hint">No attempt yet{props.d.next_attempt_at !== null ? `: due ${formatTime(props.d.next_attempt_at)}` : ''}.</p>
    );
  return (
    <table class="attempts">
      <caption class="visually-hidden">Attempts of delivery {props.d.id}</caption>
      <thead>
        <tr>
          <th scope="col">#</th>
          <th scope="col">Time</th>
          <th scope="col">Result</th>
          <th scope="col">Duration</th>
          <th scope="col">Response</th>
          <th scope="col">Sent</th>
        </tr>
      </thead>
      <tbody>
        {props.d.log.map((a) => (
          <tr key={a.attempt}>
            <td>{a.attempt}</td>
            <td class="nowrap">{formatTime(a.at)}</td>
            <td class="wrap">
              {a.status !== null ? `HTTP ${a.status}` : 'no answer'}
              {a.error !== null && a.error !== `HTTP ${a.status}` && <div class="hint wrap">{a.error}</div>}
            </td>
            <td class="nowrap">{a.duration_ms} ms</td>
            <td>
              <pre class="excerpt">{a.response_body === null || a.response_body === '' ? '—' : a.response_body}</pre>
            </td>
            <td>
              <SentHeaders headers={a.request_headers} label={`attempt ${a.attempt}`} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** The JSON body a delivery sends, pretty-printed; `open` shows it at once (the delivery page). */
export function RequestBody(props: { d: WebhookDelivery; open?: boolean }) {
  if (props.d.request_body === null) return <p class="hint">No body yet: it is fixed at the first attempt.</p>;
  return (
    <details class="request-body" open={props.open}>
      <summary>Request body, pretty-printed (sent as the same bytes on every attempt and replay)</summary>
      <pre class="message-text request-json">{prettyBody(props.d.request_body)}</pre>
    </details>
  );
}
