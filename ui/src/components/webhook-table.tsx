import type { WebhookEndpoint } from '../api/webhooks';
import { formatTime } from '../lib/format';
import { href } from '../lib/route-match';
import { Badge, Table } from './ui';

/** What an endpoint's state is, in words: enabled, failing since…, or disabled and why. */
export function endpointHealth(w: WebhookEndpoint): string {
  if (!w.enabled) return `Disabled${w.disabled_reason !== null ? `: ${w.disabled_reason}` : ''}`;
  if (w.failing_since !== null) return `Failing since ${formatTime(w.failing_since)}`;
  return 'Healthy';
}

export const eventsText = (events: readonly string[]): string => (events.includes('*') ? 'All events' : events.join(', '));

export function WebhookTable(props: { org: string; items: WebhookEndpoint[] }) {
  return (
    <Table
      caption="Webhook endpoints"
      head={['Endpoint', 'URL', 'Events', 'State', 'Health']}
      rows={props.items.length}
      empty="No webhook endpoint yet."
    >
      {props.items.map((w) => (
        <tr key={w.id}>
          <td>
            <a href={href('orgs', props.org, 'webhooks', w.id)}>{w.id}</a>
            {w.description !== null && <div class="hint">{w.description}</div>}
          </td>
          <td class="mono wrap">{w.url}</td>
          <td>{eventsText(w.events)}</td>
          <td>
            <Badge value={w.enabled ? 'enabled' : 'disabled'} />
          </td>
          <td>{endpointHealth(w)}</td>
        </tr>
      ))}
    </Table>
  );
}
