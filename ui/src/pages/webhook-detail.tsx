import '../ops-pages.css';
import { useState } from 'preact/hooks';
import { deleteWebhook, getWebhook, patchWebhook } from '../api/webhooks';
import { WebhookControls } from '../components/webhook-controls';
import { WebhookDeliveries } from '../components/webhook-deliveries';
import { WebhookForm } from '../components/webhook-form';
import { WebhookReplayRange } from '../components/webhook-replay-range';
import { endpointHealth, eventsText } from '../components/webhook-table';
import { ActionButton, Badge, ErrorNotice, Loading, Notice, PageHeader, Section } from '../components/ui';
import { useLoad } from '../components/use-load';
import { formatTime } from '../lib/format';
import { href } from '../lib/route-match';
import { navigate } from '../router';
import type { PageProps } from './page-props';

/** `#/orgs/:org/webhooks/:id[?event_type=&state=&cursor=]`: one endpoint, its controls, settings and delivery log. */
export function WebhookDetail(props: PageProps) {
  const org = props.params.org ?? '';
  const id = props.params.id ?? '';
  const endpoint = useLoad(() => getWebhook(org, id), [org, id]);
  const [refresh, setRefresh] = useState(0);
  const [saved, setSaved] = useState(false);
  const [error, setError] = useState<unknown>();
  const w = endpoint.data;
  const changed = async () => {
    await endpoint.reload();
    setRefresh((n) => n + 1);
  };
  return (
    <>
      <p class="breadcrumb">
        <a href={href('orgs', org, 'webhooks')}>Webhooks</a> / {id}
      </p>
      <PageHeader title={`Webhook ${id}`} />
      <ErrorNotice error={endpoint.error ?? error} />
      {endpoint.loading && w === undefined && <Loading />}
      {w !== undefined && (
        <>
          <Section title="Endpoint">
            <dl class="facts facts-wide">
              <dt>URL</dt>
              <dd class="mono wrap">{w.url}</dd>
              <dt>Events</dt>
              <dd>{eventsText(w.events)}</dd>
              <dt>State</dt>
              <dd>
                <Badge value={w.enabled ? 'enabled' : 'disabled'} /> {endpointHealth(w)}
              </dd>
              <dt>Secret</dt>
              <dd class="mono">
                {w.secret_hint}
                {w.previous_secret_expires_at !== null
                  ? ` (old secret signs until ${formatTime(w.previous_secret_expires_at)})`
                  : ''}
              </dd>
              <dt>Custom headers</dt>
              <dd class="mono wrap">{w.headers.length === 0 ? '—' : w.headers.map((h) => h.name).join(', ')}</dd>
              <dt>Updated</dt>
              <dd>{formatTime(w.updated_at)}</dd>
            </dl>
            <WebhookControls org={org} endpoint={w} onChanged={changed} />
          </Section>
          <WebhookDeliveries org={org} id={id} query={props.query} refresh={refresh} />
          <Section title="Replay a time range">
            <WebhookReplayRange org={org} id={id} onQueued={() => setRefresh((n) => n + 1)} />
          </Section>
          <Section title="Settings">
            {saved && <Notice kind="ok">Saved.</Notice>}
            <WebhookForm
              key={w.updated_at}
              initial={w}
              submitLabel="Save endpoint"
              onSubmit={async (s) => {
                setSaved(false);
                await patchWebhook(org, id, {
                  url: s.url,
                  events: s.events,
                  description: s.description ?? null,
                  headers: s.headers ?? [],
                });
                setSaved(true);
                await endpoint.reload();
              }}
            />
            <div class="danger-zone">
              <ActionButton
                kind="danger"
                onClick={async () => {
                  if (!window.confirm(`Delete webhook endpoint ${id} and its delivery log?`)) return;
                  try {
                    await deleteWebhook(org, id);
                    navigate(href('orgs', org, 'webhooks'));
                  } catch (e) {
                    setError(e);
                  }
                }}
              >
                Delete endpoint
              </ActionButton>
            </div>
          </Section>
        </>
      )}
    </>
  );
}
