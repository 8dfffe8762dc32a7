import { useState } from 'preact/hooks';
import { ApiFailure } from '../api/client';
import { keysApi, type ApiKey, type IssuedKey } from '../api/keys';
import { href } from '../lib/route-match';
import { keyNameProblem } from './key-rename';
import { ErrorNotice, Field, Section, Select } from './ui';

const SCOPES: ReadonlyArray<readonly [ApiKey['scope'], string]> = [
  ['full', 'Full access'],
  ['send_only', 'Send only (cannot read history or messages)'],
];

/**
 * The "New key" form: a name, the type, live or test, and for a private key its scope (issue 29).
 * A public key only sends anyway, so it has no scope to choose.
 */
export function KeyCreateForm(props: { org: string; onCreated: (k: IssuedKey) => void }) {
  const [name, setName] = useState('');
  const [type, setType] = useState<ApiKey['type']>('private');
  const [mode, setMode] = useState<ApiKey['mode']>('live');
  const [scope, setScope] = useState<ApiKey['scope']>('full');
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const invalid = keyNameProblem(name);
  const submit = async (e: Event) => {
    e.preventDefault();
    if (invalid !== undefined) return;
    setBusy(true);
    setError(undefined);
    try {
      const trimmed = name.trim();
      const issued = await keysApi.create(props.org, {
        type,
        mode,
        ...(trimmed !== '' && { name: trimmed }),
        ...(type === 'private' && { scope }),
      });
      setName('');
      props.onCreated(issued);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  const issues = error instanceof ApiFailure ? error.fieldIssues() : {};
  return (
    <Section title="New key">
      <form class="org-inline-form" onSubmit={submit} aria-label="Create a key">
        <Field
          label="Name"
          value={name}
          onValue={setName}
          autoComplete="off"
          placeholder="e.g. Billing server"
          error={invalid ?? issues.name}
        />
        <Select
          label="Type"
          value={type}
          options={[
            ['private', `Private (servers: ${mode === 'test' ? 'sk_test_' : 'sk_'}…)`],
            ['public', `Public (browsers: ${mode === 'test' ? 'pk_test_' : 'pk_'}…)`],
          ]}
          onValue={(v) => setType(v === 'public' ? 'public' : 'private')}
        />
        <Select
          label="Mode"
          value={mode}
          options={[
            ['live', 'Live (delivers, takes credits)'],
            ['test', 'Test (captured, never sent)'],
          ]}
          onValue={(v) => setMode(v === 'test' ? 'test' : 'live')}
        />
        {type === 'private' && (
          <Select
            label="Scope"
            value={scope}
            options={SCOPES}
            onValue={(v) => setScope(v === 'send_only' ? 'send_only' : 'full')}
            error={issues.scope}
          />
        )}
        <button class="btn btn-primary" type="submit" disabled={busy || invalid !== undefined}>
          Create key
        </button>
      </form>
      {issues.name === undefined && issues.scope === undefined && <ErrorNotice error={error} />}
      {type === 'private' && scope === 'send_only' && (
        <p class="hint">
          A send-only key sends mail (API, batches, uploads, SMTP submission) but is refused on history, messages, templates and
          the test inbox: a server that only sends cannot leak who was mailed what.
        </p>
      )}
      {mode === 'test' && (
        <p class="hint">
          A test key runs every send through the whole pipeline, but nothing leaves this machine and no credit is taken: the
          messages land in the <a href={href('orgs', props.org, 'test-inbox')}>Test inbox</a>.
        </p>
      )}
    </Section>
  );
}
