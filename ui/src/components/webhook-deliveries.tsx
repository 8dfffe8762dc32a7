import { Fragment } from 'preact';
import { useState } from 'preact/hooks';
import { DELIVERY_STATES, listDeliveries, replayDelivery, WEBHOOK_EVENT_TYPES, type WebhookDelivery } from '../api/webhooks';
import { formatTime } from '../lib/format';
import { href, hrefWithQuery } from '../lib/route-match';
import { navigate } from '../router';
import { ActionButton, Badge, ErrorNotice, Loading, Notice, Pager, Section, Select, Table } from './ui';
import { Attempts, RequestBody } from './webhook-attempts';
import { useLoad } from './use-load';

/**
 * A test event is posted once by the test call itself, not by the dispatcher, which sends only
 * deliveries of message events: a replayed test delivery would wait forever. Send a new one.
 */
export const TEST_EVENT = 'webhook.test';

const EVENT_OPTIONS: ReadonlyArray<readonly [string, string]> = [['', 'Any'], ...WEBHOOK_EVENT_TYPES.map((t) => [t, t] as const)];
const STATE_OPTIONS: ReadonlyArray<readonly [string, string]> = [['', 'Any'], ...DELIVERY_STATES.map((s) => [s, s] as const)];

/**
 * An endpoint's delivery log, newest first, filtered and paged through the hash query
 * (`?event_type=&state=&cursor=`): one row per delivery (issue 29) with its outcome, attempt count
 * and last result, a button that shows its attempts and the request it sent, and Replay.
 */
export function WebhookDeliveries(props: { org: string; id: string; query: URLSearchParams; refresh: number }) {
  const { org, id } = props;
  const eventType = props.query.get('event_type') ?? '';
  const state = props.query.get('state') ?? '';
  const cursor = props.query.get('cursor') ?? undefined;
  const log = useLoad(
    () =>
      listDeliveries(org, id, {
        event_type: eventType === '' ? undefined : eventType,
        state: state === '' ? undefined : state,
        cursor,
      }),
    [org, id, eventType, state, cursor, props.refresh],
  );
  const [note, setNote] = useState<string | undefined>();
  const [error, setError] = useState<unknown>();
  // Deliveries shown open: each row is one delivery, its attempts and what it sent one click away.
  const [open, setOpen] = useState<ReadonlySet<string>>(new Set());
  const toggle = (id: string) => {
    const next = new Set(open);
    if (next.has(id)) next.delete(id);
    else next.add(id);
    setOpen(next);
  };
  const link = (q: { event_type?: string; state?: string; cursor?: string }) =>
    hrefWithQuery(['orgs', org, 'webhooks', id], { event_type: eventType, state, ...q });
  const replay = async (d: WebhookDelivery) => {
    setError(undefined);
    try {
      const r = await replayDelivery(org, id, d.id);
      setNote(r.message ?? `Delivery ${d.id} queued again.`);
      await log.reload();
    } catch (e) {
      setError(e);
    }
  };
  const items = log.data?.items ?? [];
  return (
    <Section title="Delivery log">
      <div class="form-row log-filters">
        <Select
          label="Event type"
          value={eventType}
          options={EVENT_OPTIONS}
          onValue={(v) => navigate(link({ event_type: v, cursor: undefined }))}
        />
        <Select
          label="Outcome"
          value={state}
          options={STATE_OPTIONS}
          onValue={(v) => navigate(link({ state: v, cursor: undefined }))}
        />
      </div>
      <div class="page-actions">
        <button type="button" class="btn btn-plain" onClick={() => void log.reload()}>
          Reload log
        </button>
      </div>
      {note !== undefined && <Notice kind="ok">{note}</Notice>}
      <ErrorNotice error={error ?? log.error} />
      {log.loading && log.data === undefined ? (
        <Loading />
      ) : (
        <Table
          caption="Deliveries, newest first"
          head={['Time', 'Event', 'Outcome', 'Attempts', 'Last result', 'Message', 'Actions']}
          rows={items.length}
          empty="No delivery matches."
        >
          {items.map((d) => (
            <Fragment key={d.id}>
              <tr class="delivery-row">
                <td class="nowrap">{formatTime(d.created_at)}</td>
                <td>
                  <code>{d.event_type}</code>
                  <div class="hint mono">{d.id}</div>
                </td>
                <td>
                  <Badge value={d.state} />
                </td>
                <td>
                  <button
                    type="button"
                    class="btn btn-plain btn-small"
                    aria-expanded={open.has(d.id) ? 'true' : 'false'}
                    aria-controls={`attempts-${d.id}`}
                    aria-label={`${d.attempts} attempt${d.attempts === 1 ? '' : 's'} of delivery ${d.id}: ${
                      open.has(d.id) ? 'hide' : 'show'
                    } them and the request`}
                    onClick={() => toggle(d.id)}
                  >
                    <span aria-hidden="true">{open.has(d.id) ? '▾' : '▸'}</span> {d.attempts}
                  </button>
                </td>
                <td>
                  {d.last_status !== null ? `HTTP ${d.last_status}` : d.last_error !== null ? 'no answer' : '—'}
                  {d.last_error !== null && <div class="hint wrap">{d.last_error}</div>}
                </td>
                <td class="wrap">
                  {d.message_id !== null ? (
                    <a class="mono" href={href('orgs', org, 'messages', d.message_id)}>
                      {d.message_id}
                    </a>
                  ) : (
                    '—'
                  )}
                </td>
                <td>
                  {d.event_type === TEST_EVENT ? (
                    <span class="hint" title="A test event is not replayed: send a new one">
                      —
                    </span>
                  ) : (
                    <ActionButton label={`Replay delivery ${d.id}`} onClick={() => replay(d)}>
                      Replay
                    </ActionButton>
                  )}{' '}
                  <a class="btn btn-plain" href={href('orgs', org, 'webhooks', id, 'deliveries', d.id)}>
                    Open<span class="visually-hidden"> delivery {d.id}</span>
                  </a>
                </td>
              </tr>
              <tr class="delivery-attempts" id={`attempts-${d.id}`} hidden={!open.has(d.id)}>
                <td colSpan={7}>
                  {open.has(d.id) && (
                    <>
                      <Attempts d={d} />
                      <RequestBody d={d} />
                    </>
                  )}
                </td>
              </tr>
            </Fragment>
          ))}
        </Table>
      )}
      <Pager
        first={cursor !== undefined && link({ cursor: undefined })}
        next={typeof log.data?.next_cursor === 'string' && link({ cursor: log.data.next_cursor })}
      />
    </Section>
  );
}
