import { useState } from 'preact/hooks';
import { ApiFailure } from '../api/client';
import { servicesApi, type ServiceTestResult } from '../api/services';
import { Field, Notice, Section } from './ui';

/** POST …/services/{id}/test: the credential check (and a real message with `to`), its result or the provider's error. */
export function ServiceTestPanel(props: { org: string; id: string }) {
  const [to, setTo] = useState('');
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState<ServiceTestResult | undefined>();
  const [failure, setFailure] = useState<unknown>();
  const run = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setResult(undefined);
    setFailure(undefined);
    try {
      setResult(await servicesApi.test(props.org, props.id, to.trim()));
    } catch (err) {
      setFailure(err);
    } finally {
      setBusy(false);
    }
  };
  const details =
    failure instanceof ApiFailure ? (failure.details as { reason?: string; stage?: string } | undefined) : undefined;
  return (
    <Section title="Test">
      <form class="org-inline-form" onSubmit={run} aria-label="Test the service">
        <Field label="Also send a test message to (optional)" type="email" autoComplete="off" value={to} onValue={setTo} />
        <button class="btn btn-primary" type="submit" disabled={busy}>
          {busy ? 'Testing…' : 'Test'}
        </button>
      </form>
      <div aria-live="polite">
        {result !== undefined && (
          <Notice kind="ok">
            <strong>Test passed</strong>: the credentials work ({result.latency_ms} ms).
            {result.sent !== undefined && (
              <>
                {' '}
                Sent to {result.sent.to}: <code>{result.sent.response}</code>
                {result.sent.provider_message_id !== undefined && (
                  <>
                    {' '}
                    (provider id <code>{result.sent.provider_message_id}</code>)
                  </>
                )}
                .
              </>
            )}
          </Notice>
        )}
        {failure !== undefined && (
          <Notice kind="error">
            <strong>Test failed</strong>
            {details?.reason !== undefined && (
              <>
                {' '}
                ({details.reason}
                {details.stage !== undefined ? `, at ${details.stage}` : ''})
              </>
            )}
            : {failure instanceof Error ? failure.message : String(failure)}
          </Notice>
        )}
      </div>
    </Section>
  );
}
