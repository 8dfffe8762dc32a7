import { useState } from 'preact/hooks';
import { AddressText } from './address-text';
import { readableAddress } from '../lib/idn';
import { addSuppression, listSuppressions, removeSuppression, SUPPRESSION_REASONS } from '../api/lists';
import { formatTime } from '../lib/format';
import { href } from '../lib/route-match';
import { reasonBeyondSource, sourceLabel, suppressionSource } from '../lib/suppression-source';
import { SuppressionPager, SuppressionSearch } from './suppression-search';
import { ActionButton, ErrorNotice, Field, Loading, Notice, Section, Select, Table } from './ui';
import { useLoad } from './use-load';

/** Entries per page (the server answers the whole list when no limit is given). */
const PAGE_SIZE = 50;
import { ApiFailure } from '../api/client';

/** Adds an address to the suppression list, with the reason an operator gives. */
function AddSuppression(props: { org: string; onAdded: (email: string, created: boolean) => Promise<void> }) {
  const [email, setEmail] = useState('');
  const [reason, setReason] = useState('manual');
  const [error, setError] = useState<unknown>();
  const issues = error instanceof ApiFailure ? error.fieldIssues() : {};
  const submit = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    try {
      const before = email.trim();
      await addSuppression(props.org, before, reason);
      setEmail('');
      await props.onAdded(before.toLowerCase(), true);
    } catch (err) {
      setError(err);
    }
  };
  return (
    <form class="inline-form" onSubmit={submit} aria-label="Add a suppression">
      <Field
        label="Address to suppress"
        type="email"
        value={email}
        onValue={setEmail}
        required
        error={issues.email}
        autoComplete="off"
      />
      <Select label="Reason" value={reason} options={SUPPRESSION_REASONS} onValue={setReason} />
      <button type="submit" class="btn btn-primary" disabled={email.trim() === ''}>
        Add suppression
      </button>
      {issues.email === undefined && <ErrorNotice error={error} />}
    </form>
  );
}

/** The suppression list: search, paging, add, remove, and why each address is there. */
export function SuppressionList(props: { org: string; q: string; cursor: string | undefined }) {
  const { org, q, cursor } = props;
  const page = useLoad(() => listSuppressions(org, { q: q === '' ? undefined : q, cursor, limit: PAGE_SIZE }), [org, q, cursor]);
  const [note, setNote] = useState<string | undefined>();
  const [error, setError] = useState<unknown>();
  const remove = async (email: string) => {
    if (!window.confirm(`Remove ${readableAddress(email)} from the suppression list? Messages to it will be sent again.`)) return;
    setError(undefined);
    try {
      await removeSuppression(org, email);
      setNote(`${readableAddress(email)} is no longer suppressed.`);
      await page.reload();
    } catch (e) {
      setError(e);
    }
  };
  const items = page.data?.items ?? [];
  return (
    <Section title="Suppressions">
      <p class="hint">Recipients refused with 451: added by hand, or by a hard bounce or a spam complaint.</p>
      <AddSuppression
        org={org}
        onAdded={async (email) => {
          setNote(`${readableAddress(email)} is suppressed.`);
          await page.reload();
        }}
      />
      <SuppressionSearch org={org} list={undefined} q={q} label="Search suppressions" />
      {note !== undefined && <Notice kind="ok">{note}</Notice>}
      <ErrorNotice error={error ?? page.error} />
      {page.loading && page.data === undefined ? (
        <Loading />
      ) : (
        <Table
          caption="Suppressed addresses"
          head={['Address', 'Why', 'From message', 'Since', 'Actions']}
          rows={items.length}
          empty={q !== '' ? `No suppressed address contains "${q}".` : 'No address is suppressed.'}
        >
          {items.map((s) => {
            const source = suppressionSource(s);
            const more = reasonBeyondSource(s);
            return (
              <tr key={s.email}>
                <td>
                  <AddressText value={s.email} />
                </td>
                <td>
                  <span class={`source source-${source}`}>{sourceLabel(source)}</span>
                  {more !== undefined && <div class="hint mono wrap">{more}</div>}
                </td>
                <td>
                  {s.message_id !== undefined && s.message_id !== null ? (
                    <a class="mono" href={href('orgs', org, 'messages', s.message_id)}>
                      {s.message_id}
                    </a>
                  ) : (
                    '—'
                  )}
                </td>
                <td class="nowrap">{formatTime(s.created_at)}</td>
                <td>
                  <ActionButton kind="danger" label={`Remove ${readableAddress(s.email)}`} onClick={() => remove(s.email)}>
                    Remove
                  </ActionButton>
                </td>
              </tr>
            );
          })}
        </Table>
      )}
      <SuppressionPager org={org} list={undefined} q={q} cursor={cursor} next={page.data?.next_cursor} />
    </Section>
  );
}
