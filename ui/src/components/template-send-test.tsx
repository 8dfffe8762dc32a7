/**
 * "Send test": the saved template, the preview's sample parameters, to one address, through
 * the normal send path (credits, suppressions, history). Links to the message it created.
 */
import { useState } from 'preact/hooks';
import { ApiFailure } from '../api/client';
import { templatesApi, type SendTestResult } from '../api/templates';
import { paramIssues } from '../lib/params-form';
import { href } from '../lib/route-match';
import { ErrorNotice, Field, Notice, Section } from './ui';

export function TemplateSendTest(props: { org: string; id: string; params: Record<string, unknown>; unsaved: boolean }) {
  const [to, setTo] = useState('');
  const [sent, setSent] = useState<SendTestResult | undefined>();
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const send = async () => {
    setError(undefined);
    setSent(undefined);
    setBusy(true);
    try {
      setSent(await templatesApi.sendTest(props.org, props.id, { to: to.trim(), template_params: props.params }));
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  const issues =
    error instanceof ApiFailure && error.code === 'invalid_template_params' ? paramIssues(error.details).summary : [];
  const toError = error instanceof ApiFailure ? error.fieldIssues().to : undefined;
  return (
    <Section title="Send test">
      <form
        class="send-test"
        onSubmit={(e) => {
          e.preventDefault();
          void send();
        }}
      >
        <Field
          label="Send a test to"
          type="email"
          autoComplete="email"
          value={to}
          onValue={setTo}
          error={toError}
          hint="Uses the sample parameters above"
        />
        <button type="submit" class="btn btn-primary" disabled={busy || to.trim() === ''} aria-busy={busy ? 'true' : undefined}>
          {busy ? 'Sending…' : 'Send test'}
        </button>
      </form>
      {props.unsaved && <p class="hint">The test uses the saved template: save your changes first to send them.</p>}
      {sent !== undefined && (
        <Notice kind="ok">
          Test accepted ({sent.status}): message{' '}
          <a href={href('orgs', props.org, 'messages', sent.message_id)}>
            <code>{sent.message_id}</code>
          </a>
        </Notice>
      )}
      {error !== undefined && toError === undefined && <ErrorNotice error={error} />}
      {issues.length > 0 && (
        <ul class="issue-list">
          {issues.map((s) => (
            <li key={s}>{s}</li>
          ))}
        </ul>
      )}
    </Section>
  );
}
