import './request-log.css';
import type { RequestLogEntry } from '../api/request-log';
import { formatTime } from '../lib/format';
import { codeWords, fieldsText } from '../lib/request-log';
import { Table } from './ui';

/**
 * Refused requests, newest first: a table on a desk, a list on a phone (Table). Each row's
 * fields open in place as JSON text (a <pre>: Preact writes text, never HTML).
 */
export function RequestLogTable(props: { items: RequestLogEntry[]; filtered: boolean }) {
  return (
    <Table
      caption="Refused requests, newest first"
      head={['Time', 'Status', 'Error', 'Route', 'Key', 'Request']}
      rows={props.items.length}
      empty={
        props.filtered ? 'No refused request matches these filters.' : 'No refused requests: every API request was accepted.'
      }
    >
      {props.items.map((r) => (
        <tr key={r.id}>
          <td class="nowrap">
            <span title={r.id}>{formatTime(r.created_at)}</span>
          </td>
          <td>
            <span class={`status-code status-${Math.floor(r.status / 100)}xx`}>{r.status}</span>
          </td>
          <td class="wrap">
            <strong>{codeWords(r.code)}</strong> <code class="hint">{r.code}</code>
            <div class="hint request-message">{r.message}</div>
          </td>
          <td class="wrap">
            <code>
              {r.method} {r.route}
            </code>
          </td>
          <td>{r.key_id === null ? '—' : <code>{r.key_id}</code>}</td>
          <td class="wrap">
            <details class="request-fields">
              <summary>Fields</summary>
              <pre>{fieldsText(r.fields)}</pre>
              {r.ip !== null && <div class="hint">From {r.ip}</div>}
            </details>
          </td>
        </tr>
      ))}
    </Table>
  );
}
