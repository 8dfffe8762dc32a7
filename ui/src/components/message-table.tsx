import { formatTime } from '../lib/format';
import { href } from '../lib/route-match';
import type { MessageSummary } from '../api/messages';
import type { Mode } from '../lib/test-mode';
import { type MessageSelection, SelectCell } from './message-bulk';
import { Badge, Table } from './ui';

/**
 * The history as a table: one row per message, its time a link to the message's detail (named
 * with the message id too, for screen readers and for finding it by id). That link's box covers
 * the whole row (`row-link`, ops-pages.css), so a click anywhere on the row opens the message,
 * while the keyboard and screen readers meet one real link per row, not a clickable <tr>.
 */
export function MessageTable(props: {
  org: string;
  items: MessageSummary[];
  filtered: boolean;
  mode?: Mode;
  /** Held messages chosen for a bulk action (message-bulk.tsx): a checkbox column first. */
  selection?: MessageSelection | undefined;
}) {
  const selection = props.selection;
  return (
    <Table
      caption="Messages, newest first"
      head={[...(selection === undefined ? [] : ['Select']), 'Time', 'Status', 'Template', 'To', 'Subject']}
      rows={props.items.length}
      empty={
        props.filtered
          ? 'No message matches these filters.'
          : props.mode === 'test'
            ? 'No test messages yet: send with a test key (sk_test_…).'
            : 'No messages yet.'
      }
    >
      {props.items.map((m) => (
        <tr key={m.message_id} class="row-linked">
          {selection !== undefined && (
            <SelectCell selection={selection} id={m.message_id} label={`${formatTime(m.created_at)}, message ${m.message_id}`} />
          )}
          <td class="nowrap">
            <a
              class="row-link"
              href={href('orgs', props.org, 'messages', m.message_id)}
              aria-label={`${formatTime(m.created_at)}, message ${m.message_id}`}
              title={m.message_id}
            >
              {formatTime(m.created_at)}
            </a>
          </td>
          <td>
            {/* A deferred message is `queued` in the API, flagged `retrying`: the word an outage needs. */}
            <Badge value={m.retrying === true ? 'retrying' : m.status} />
            {/* On the Test messages page every row is a test message: the title says it once. */}
            {m.mode === 'test' && props.mode !== 'test' && (
              <>
                {' '}
                <Badge value="test" />
              </>
            )}
          </td>
          <td>{m.template_id}</td>
          <td class="wrap">{m.to.join(', ') || '—'}</td>
          <td>{m.subject ?? '—'}</td>
        </tr>
      ))}
    </Table>
  );
}
