import { useState } from 'preact/hooks';
import { ApiFailure } from '../api/client';
import { keysApi, type ApiKey, type IssuedKey } from '../api/keys';
import { ErrorNotice, Field, Section } from './ui';

/** Longest grace period the server allows (src/admin/keys.ts MAX_GRACE_SECONDS: 30 days). */
const MAX_GRACE_SECONDS = 30 * 86_400;

/** Rotating one key: a grace period during which the old key keeps working, then the new key. */
export function KeyRotateForm(props: { org: string; apiKey: ApiKey; onRotated: (k: IssuedKey) => void; onCancel: () => void }) {
  const [grace, setGrace] = useState('0');
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const n = Number(grace);
  const invalid =
    !/^\d+$/.test(grace.trim()) || n > MAX_GRACE_SECONDS ? `a whole number of seconds, 0 to ${MAX_GRACE_SECONDS}` : undefined;
  const submit = async (e: Event) => {
    e.preventDefault();
    if (invalid !== undefined) return;
    setBusy(true);
    setError(undefined);
    try {
      props.onRotated(await keysApi.rotate(props.org, props.apiKey.id, n));
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  const serverField = error instanceof ApiFailure ? error.fieldIssues().grace_seconds : undefined;
  return (
    <Section title={`Rotate key ${props.apiKey.id}`}>
      <form onSubmit={submit} aria-label={`Rotate key ${props.apiKey.id}`}>
        <p>A new {props.apiKey.type} key replaces this one. During the grace period both keys work.</p>
        <Field
          label="Grace period (seconds)"
          type="number"
          min={0}
          max={MAX_GRACE_SECONDS}
          inputMode="numeric"
          value={grace}
          onValue={setGrace}
          error={invalid ?? serverField}
          hint="0 stops the old key at once; 3600 is an hour, 86400 a day."
        />
        {serverField === undefined && <ErrorNotice error={error} />}
        <div class="org-form-actions">
          <button class="btn btn-primary" type="submit" disabled={busy || invalid !== undefined}>
            Rotate
          </button>
          <button class="btn btn-plain" type="button" onClick={props.onCancel}>
            Cancel
          </button>
        </div>
      </form>
    </Section>
  );
}
