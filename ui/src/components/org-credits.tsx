import { useState } from 'preact/hooks';
import { ApiFailure } from '../api/client';
import { organizationsApi } from '../api/organizations';
import { formatCount } from '../lib/format';
import { href } from '../lib/route-match';
import { ErrorNotice, Field, Notice, Section } from './ui';

/**
 * The balance and a top-up form (POST …/credits); held messages it pays for are released. With
 * credits `unlimited` (issue 29) there is no balance to show or top up: it says so instead.
 */
export function OrgCredits(props: { org: string; credits: number | 'unlimited'; held: number; onChanged: () => void }) {
  if (props.credits === 'unlimited')
    return (
      <Section title="Credits">
        <p>
          <span class="stat">Unlimited</span> <span class="stat-label">credits are not metered</span>
        </p>
        <p class="hint">Sends take no credit. Choose Metered under “Credits and hold mode” to meter them again.</p>
      </Section>
    );
  return <OrgBalance {...props} credits={props.credits} />;
}

function OrgBalance(props: { org: string; credits: number; held: number; onChanged: () => void }) {
  const [amount, setAmount] = useState('');
  const [error, setError] = useState<unknown>();
  const [done, setDone] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const n = Number(amount);
  const invalid = amount !== '' && (!Number.isInteger(n) || n < 1) ? 'must be a whole number, at least 1' : undefined;
  const submit = async (e: Event) => {
    e.preventDefault();
    if (invalid !== undefined || amount === '') return;
    setBusy(true);
    setError(undefined);
    setDone(undefined);
    try {
      const r = await organizationsApi.topUp(props.org, n);
      const held = r.released.length;
      const released = held > 0 ? `, ${held} held message${held === 1 ? '' : 's'} released` : '';
      setDone(`Added ${formatCount(n)} credits: the balance is ${formatCount(r.credits)}${released}.`);
      setAmount('');
      props.onChanged();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  const fieldError = invalid ?? (error instanceof ApiFailure ? error.fieldIssues().amount : undefined);
  return (
    <Section title="Credits">
      <p>
        <span class="stat">{formatCount(props.credits)}</span> <span class="stat-label">credits left</span>
      </p>
      {props.held > 0 && (
        <p>
          <a href={`${href('orgs', props.org, 'messages')}?status=held`}>{formatCount(props.held)} messages held</a> for lack of
          credits.
        </p>
      )}
      {done !== undefined && <Notice kind="ok">{done}</Notice>}
      {fieldError === undefined && <ErrorNotice error={error} />}
      <form class="org-inline-form" onSubmit={submit} aria-label="Top up credits">
        <Field
          label="Credits to add"
          type="number"
          min={1}
          inputMode="numeric"
          value={amount}
          onValue={setAmount}
          error={fieldError}
        />
        <button class="btn btn-primary" type="submit" disabled={busy || amount === '' || invalid !== undefined}>
          Top up
        </button>
      </form>
    </Section>
  );
}
