import { formatTime } from '../lib/format';
import { href } from '../lib/route-match';
import type { MessageSummary } from '../api/messages';
import { Badge, Table } from './ui';

/** The history as a table: one row per message, its id a link to the message's detail. */
export function MessageTable(props: { org: string; items: MessageSummary[]; filtered: boolean }) {
  return (
    <Table caption="Messages, newest first" head={['Time', 'Status', 'Template', 'To', 'Subject', 'Message']} rows={props.items.length}
      empty={props.filtered ? 'No message matches these filters.' : 'No messages yet.'}>
      {props.items.map((m) => (
        <tr key={m.message_id}>
          <td class="nowrap">{formatTime(m.created_at)}</td>
          <td><Badge value={m.status} /></td>
          <td>{m.template_id}</td>
          <td>{m.to.join(', ') || '—'}</td>
          <td>{m.subject ?? '—'}</td>
          <td><a class="mono" href={href('orgs', props.org, 'messages', m.message_id)} aria-label={`Message ${m.message_id}`}>{m.message_id}</a></td>
        </tr>
      ))}
    </Table>
  );
}
