import '../ops-pages.css';
import { useState } from 'preact/hooks';
import { createWebhook, listWebhooks, type WebhookEndpoint } from '../api/webhooks';
import { WebhookForm } from '../components/webhook-form';
import { WebhookSecret } from '../components/webhook-secret';
import { WebhookTable } from '../components/webhook-table';
import { ErrorNotice, Loading, PageHeader, Section } from '../components/ui';
import { useLoad } from '../components/use-load';
import { href } from '../lib/route-match';
import type { PageProps } from './page-props';

/** `#/orgs/:org/webhooks`: the endpoints and their health, and a form to add one (its secret shown once). */
export function Webhooks(props: PageProps) {
  const org = props.params.org ?? '';
  const list = useLoad(() => listWebhooks(org), [org]);
  const [created, setCreated] = useState<(WebhookEndpoint & { secret: string }) | undefined>();
  const [formKey, setFormKey] = useState(0);
  return (
    <>
      <PageHeader title="Webhooks" />
      <ErrorNotice error={list.error} />
      <Section title="Endpoints">
        {list.loading && list.data === undefined ? (
          <Loading />
        ) : (
          list.data !== undefined && <WebhookTable org={org} items={list.data.items} />
        )}
      </Section>
      <Section title="Add an endpoint">
        {created !== undefined && (
          <div class="created">
            <p>
              Endpoint <a href={href('orgs', org, 'webhooks', created.id)}>{created.id}</a> added.
            </p>
            <WebhookSecret secret={created.secret} />
          </div>
        )}
        <WebhookForm
          key={formKey}
          submitLabel="Add endpoint"
          onSubmit={async (s) => {
            const w = await createWebhook(org, s);
            setCreated(w);
            setFormKey(formKey + 1);
            await list.reload();
          }}
        />
      </Section>
    </>
  );
}
