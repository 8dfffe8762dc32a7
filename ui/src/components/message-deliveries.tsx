import { listMessageDeliveries } from '../api/messages';
import { formatTime } from '../lib/format';
import { href } from '../lib/route-match';
import { Badge, ErrorNotice, Loading, Section, Table } from './ui';
import { useLoad } from './use-load';

/**
 * The webhook deliveries of a message's events, newest first (the organization's delivery log
 * filtered by message_id), each linking to its delivery's page (pages/webhook-delivery.tsx).
 * `refresh` reloads them with the message.
 */
export function MessageDeliveries(props: { org: string; id: string; refresh: unknown }) {
  const { org, id } = props;
  const log = useLoad(() => listMessageDeliveries(org, id), [org, id, props.refresh]);
  const items = log.data?.items ?? [];
  return (
    <Section title="Webhook deliveries">
      <ErrorNotice error={log.error} />
      {log.loading && log.data === undefined ? (
        <Loading />
      ) : (
        <Table
          caption="Webhook deliveries of this message, newest first"
          head={['Event', 'Endpoint', 'Outcome', 'Attempts', 'Last result', 'Created']}
          rows={items.length}
          empty="No webhook delivery: no endpoint subscribes to this message's events, or none happened yet."
        >
          {items.map((d) => (
            <tr key={d.id}>
              <td>
                <a href={href('orgs', org, 'webhooks', d.endpoint_id, 'deliveries', d.id)}>
                  <code>{d.event_type}</code>
                </a>
                <div class="hint mono">{d.id}</div>
              </td>
              <td class="wrap">
                <a href={href('orgs', org, 'webhooks', d.endpoint_id)}>{d.endpoint_id}</a>
              </td>
              <td>
                <Badge value={d.state} />
              </td>
              <td>{d.attempts}</td>
              <td class="wrap">
                {d.last_status ?? (d.last_error !== null ? 'no answer' : '—')}
                {d.last_error !== null && <div class="hint wrap">{d.last_error}</div>}
              </td>
              <td class="nowrap">{formatTime(d.created_at)}</td>
            </tr>
          ))}
        </Table>
      )}
    </Section>
  );
}
