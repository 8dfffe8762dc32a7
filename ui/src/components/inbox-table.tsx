import type { InboxItem } from '../api/test-inbox';
import { formatTime } from '../lib/format';
import { href } from '../lib/route-match';
import { Badge, Table } from './ui';

const list = (a: readonly string[]) => (a.length === 0 ? '—' : a.join(', '));

/**
 * The captured messages, newest first: each row's time opens the captured copy
 * (`#/orgs/:org/test-inbox/:id`), named with the message id for screen readers and search.
 */
export function InboxTable(props: { org: string; items: InboxItem[] }) {
  return (
    <Table
      caption="Captured test messages, newest first"
      head={['Time', 'To', 'Subject', 'Template', 'Status']}
      rows={props.items.length}
      empty="No captured message matches these filters."
    >
      {props.items.map((m) => (
        <tr key={m.message_id}>
          <td class="nowrap">
            <a
              href={href('orgs', props.org, 'test-inbox', m.message_id)}
              aria-label={`${formatTime(m.created_at)}, captured message ${m.message_id}`}
              title={m.message_id}
            >
              {formatTime(m.created_at)}
            </a>
          </td>
          <td class="wrap">
            {list(m.to)}
            {m.cc.length > 0 && <span class="hint"> cc {list(m.cc)}</span>}
          </td>
          <td>{m.subject ?? '—'}</td>
          <td>{m.template_id}</td>
          <td>
            <Badge value={m.status} />
          </td>
        </tr>
      ))}
    </Table>
  );
}
