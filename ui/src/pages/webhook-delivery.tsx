import '../ops-pages.css';
import { useState } from 'preact/hooks';
import { getDelivery, replayDelivery } from '../api/webhooks';
import { Attempts, RequestBody } from '../components/webhook-attempts';
import { TEST_EVENT } from '../components/webhook-deliveries';
import { ListOnPhone } from '../components/table';
import { ActionButton, Badge, ErrorNotice, Loading, Notice, PageHeader, Section } from '../components/ui';
import { useLoad } from '../components/use-load';
import { formatTime } from '../lib/format';
import { href } from '../lib/route-match';
import type { PageProps } from './page-props';

/**
 * `#/orgs/:org/webhooks/:id/deliveries/:delivery`: one delivery of an endpoint (issue 29: the
 * message page links each of its deliveries here): what was sent, to which endpoint, its outcome,
 * every attempt, and Replay.
 */
export function WebhookDeliveryPage(props: PageProps) {
  const org = props.params.org ?? '';
  const id = props.params.id ?? '';
  const deliveryId = props.params.delivery ?? '';
  const delivery = useLoad(() => getDelivery(org, id, deliveryId), [org, id, deliveryId]);
  const [note, setNote] = useState<string | undefined>();
  const [error, setError] = useState<unknown>();
  const d = delivery.data;
  const replay = async () => {
    setError(undefined);
    try {
      const r = await replayDelivery(org, id, deliveryId);
      setNote(r.message ?? `Delivery ${deliveryId} queued again.`);
      await delivery.reload();
    } catch (e) {
      setError(e);
    }
  };
  return (
    <>
      <p class="breadcrumb">
        <a href={href('orgs', org, 'webhooks')}>Webhooks</a> / <a href={href('orgs', org, 'webhooks', id)}>{id}</a> /{' '}
        <span class="mono">{deliveryId}</span>
      </p>
      <PageHeader title={`Webhook delivery ${deliveryId}`}>
        <button type="button" class="btn btn-plain" onClick={() => void delivery.reload()}>
          Reload
        </button>
      </PageHeader>
      <ErrorNotice error={delivery.error ?? error} />
      {note !== undefined && <Notice kind="ok">{note}</Notice>}
      {delivery.loading && d === undefined && <Loading />}
      {d !== undefined && (
        <>
          <Section title="Delivery">
            <dl class="facts facts-wide">
              <dt>Event</dt>
              <dd>
                <code>{d.event_type}</code>
              </dd>
              <dt>Outcome</dt>
              <dd>
                <Badge value={d.state} />
              </dd>
              <dt>Message</dt>
              <dd class="wrap">
                {d.message_id !== null ? (
                  <a class="mono" href={href('orgs', org, 'messages', d.message_id)}>
                    {d.message_id}
                  </a>
                ) : (
                  '—'
                )}
              </dd>
              <dt>Endpoint</dt>
              <dd>
                <a href={href('orgs', org, 'webhooks', d.endpoint_id)}>{d.endpoint_id}</a>
              </dd>
              <dt>webhook-id</dt>
              <dd class="mono wrap">{d.webhook_id}</dd>
              <dt>Created</dt>
              <dd>{formatTime(d.created_at)}</dd>
              <dt>Attempts</dt>
              <dd>{d.attempts}</dd>
              <dt>Next attempt</dt>
              <dd>{formatTime(d.next_attempt_at)}</dd>
            </dl>
            {d.event_type !== TEST_EVENT && (
              <div class="page-actions">
                <ActionButton label={`Replay delivery ${d.id}`} onClick={replay}>
                  Replay
                </ActionButton>
              </div>
            )}
          </Section>
          <Section title="Attempts">
            <ListOnPhone>
              <Attempts d={d} />
            </ListOnPhone>
          </Section>
          <Section title="Request">
            <RequestBody d={d} open />
          </Section>
        </>
      )}
    </>
  );
}
