import { useState } from 'preact/hooks';
import { rotateWebhookSecret, setWebhookEnabled, testWebhook, type TestResult, type WebhookEndpoint } from '../api/webhooks';
import { formatTime } from '../lib/format';
import { WebhookSecret } from './webhook-secret';
import { ActionButton, ErrorNotice, Notice } from './ui';

/** What the receiver answered the test event with. */
const answerOf = (status: number | null) => (status === null ? 'no answer' : `HTTP ${status}`);

/** Enable/disable, rotate the secret (the new one shown once), send a test event and show what the receiver did. */
export function WebhookControls(props: { org: string; endpoint: WebhookEndpoint; onChanged: () => Promise<void> }) {
  const { org, endpoint } = props;
  const [secret, setSecret] = useState<{ secret: string; until: string | null } | undefined>();
  const [test, setTest] = useState<TestResult | undefined>();
  const [error, setError] = useState<unknown>();
  const run = (fn: () => Promise<void>) => async () => {
    setError(undefined);
    try {
      await fn();
    } catch (e) {
      setError(e);
    }
  };
  return (
    <div class="webhook-controls">
      <div class="page-actions">
        <ActionButton
          kind="primary"
          onClick={run(async () => {
            setTest(await testWebhook(org, endpoint.id));
            await props.onChanged();
          })}
        >
          Send test event
        </ActionButton>
        <ActionButton
          onClick={run(async () => {
            await setWebhookEnabled(org, endpoint.id, !endpoint.enabled);
            await props.onChanged();
          })}
        >
          {endpoint.enabled ? 'Disable' : 'Enable'}
        </ActionButton>
        <ActionButton
          kind="danger"
          onClick={run(async () => {
            if (!window.confirm('Rotate the signing secret? The old one keeps signing beside the new one for the grace period.'))
              return;
            const r = await rotateWebhookSecret(org, endpoint.id);
            setSecret({ secret: r.secret, until: r.previous_secret_expires_at });
            await props.onChanged();
          })}
        >
          Rotate secret
        </ActionButton>
      </div>
      <ErrorNotice error={error} />
      {secret !== undefined && (
        <WebhookSecret
          secret={secret.secret}
          note={secret.until !== null ? `The old secret also signs until ${formatTime(secret.until)}.` : undefined}
        />
      )}
      {test !== undefined && (
        <Notice kind={test.ok ? 'ok' : 'error'}>
          Test event {test.ok ? 'delivered' : 'not accepted'}: {answerOf(test.status)} in {test.duration_ms} ms
          {test.error !== null ? ` — ${test.error}` : ''} (delivery <span class="mono">{test.delivery_id}</span>).
        </Notice>
      )}
    </div>
  );
}
