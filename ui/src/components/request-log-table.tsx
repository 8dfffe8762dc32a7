import './request-log.css';
import { Fragment } from 'preact';
import type { RequestLogEntry } from '../api/request-log';
import { formatTime } from '../lib/format';
import { codeWords, fieldsText } from '../lib/request-log';
import { Table } from './ui';

/**
 * Refused requests, newest first: a table on a desk, a list on a phone (Table). Under each row, a
 * full-width "Fields" fold opens what was recorded of the request as JSON text (a <pre>: Preact
 * writes text, never HTML), as wide as the table rather than squeezed into a column.
 */
export function RequestLogTable(props: { items: RequestLogEntry[]; filtered: boolean }) {
  return (
    <Table
      caption="Refused requests, newest first"
      head={['Time', 'Status', 'Error', 'Route', 'Key']}
      rows={props.items.length}
      empty={
        props.filtered ? 'No refused request matches these filters.' : 'No refused requests: every API request was accepted.'
      }
    >
      {props.items.map((r) => (
        <Fragment key={r.id}>
          <tr class="request-row">
            <td class="nowrap">
              <span title={r.id}>{formatTime(r.created_at)}</span>
            </td>
            <td>
              <span class="status-code">{r.status}</span>
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
            <td class="wrap">{r.key_id === null ? '—' : <code>{r.key_id}</code>}</td>
          </tr>
          <tr class="request-fields-row">
            <td colSpan={5}>
              <details class="request-fields">
                <summary>
                  Fields<span class="visually-hidden"> of the request at {formatTime(r.created_at)}</span>
                  {r.ip !== null && <span class="hint"> · from {r.ip}</span>}
                </summary>
                <pre>{fieldsText(r.fields)}</pre>
              </details>
            </td>
          </tr>
        </Fragment>
      ))}
    </Table>
  );
}
