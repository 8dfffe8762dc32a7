import { useState } from 'preact/hooks';
import { ApiFailure } from '../api/client';
import { servicesApi, type ServiceTestResult } from '../api/services';
import { Field, Notice, Section } from './ui';

/**
 * The credential check (and a real message with `to`), its result or the provider's error, of
 * what is on screen (issue 29): the saved settings while the form is unchanged (POST
 * …/services/{id}/test), else the form's unsaved body (POST …/services/test), and it says which.
 */
export function ServiceTestPanel(props: {
  org: string;
  /** The stored service, or undefined while creating one. */
  id: string | undefined;
  /** The form's body as a save would send it; undefined when it equals the saved settings. */
  unsaved: () => Record<string, unknown> | undefined;
}) {
  const [to, setTo] = useState('');
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState<ServiceTestResult | undefined>();
  const [tested, setTested] = useState<'form' | 'saved' | undefined>();
  const [failure, setFailure] = useState<unknown>();
  const run = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setResult(undefined);
    setFailure(undefined);
    const body = props.unsaved();
    const which = body === undefined && props.id !== undefined ? 'saved' : 'form';
    setTested(which);
    try {
      setResult(
        body === undefined && props.id !== undefined
          ? await servicesApi.test(props.org, props.id, to.trim())
          : await servicesApi.testForm(props.org, { ...body, ...(props.id !== undefined ? { id: props.id } : {}) }, to.trim()),
      );
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
        {tested !== undefined && !busy && (
          <p class="service-tested">{tested === 'saved' ? 'Tested the saved settings.' : 'Tested the form (unsaved).'}</p>
        )}
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
        {failure instanceof ApiFailure && failure.code === 'invalid_body' && (
          <Notice kind="error">
            <strong>Test not run</strong>: {failure.message}
          </Notice>
        )}
        {failure !== undefined && !(failure instanceof ApiFailure && failure.code === 'invalid_body') && (
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
