import { useState } from 'preact/hooks';
import { AddressText } from './address-text';
import { readableAddress } from '../lib/idn';
import { addBlockListEntry, listBlockList, removeBlockListEntry } from '../api/lists';
import { ApiFailure } from '../api/client';
import { SuppressionPager, SuppressionSearch } from './suppression-search';
import { ActionButton, ErrorNotice, Field, Loading, Notice, Section, Table } from './ui';
import { useLoad } from './use-load';

/** Entries per page (the server answers the whole list when no limit is given). */
const PAGE_SIZE = 50;

/** The block list: addresses (or values of the watched parameter) refused with 403. */
export function BlockList(props: { org: string; q: string; cursor: string | undefined }) {
  const { org, q, cursor } = props;
  const page = useLoad(() => listBlockList(org, { q: q === '' ? undefined : q, cursor, limit: PAGE_SIZE }), [org, q, cursor]);
  const [value, setValue] = useState('');
  const [note, setNote] = useState<string | undefined>();
  const [error, setError] = useState<unknown>();
  const issues = error instanceof ApiFailure ? error.fieldIssues() : {};
  const add = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    try {
      const r = await addBlockListEntry(org, value.trim());
      setValue('');
      setNote(`${readableAddress(r.value)} is on the block list.`);
      await page.reload();
    } catch (err) {
      setError(err);
    }
  };
  const remove = async (v: string) => {
    if (!window.confirm(`Remove "${v}" from the block list?`)) return;
    setError(undefined);
    try {
      await removeBlockListEntry(org, v);
      setNote(`"${readableAddress(v)}" is no longer blocked.`);
      await page.reload();
    } catch (err) {
      setError(err);
    }
  };
  const items = page.data?.items ?? [];
  const watch = page.data?.watch_variable;
  return (
    <Section title="Block list">
      <p class="hint">
        Recipients refused with 403
        {watch !== null && watch !== undefined ? (
          <>
            , and values of the template parameter <code>{watch}</code>
          </>
        ) : (
          ''
        )}
        .
      </p>
      <form class="inline-form" onSubmit={add} aria-label="Add a block-list entry">
        <Field
          label="Address or value to block"
          value={value}
          onValue={setValue}
          required
          error={issues.value}
          autoComplete="off"
        />
        <button type="submit" class="btn btn-primary" disabled={value.trim() === ''}>
          Add to block list
        </button>
      </form>
      <SuppressionSearch org={org} list="block" q={q} label="Search the block list" />
      {note !== undefined && <Notice kind="ok">{note}</Notice>}
      {issues.value === undefined && <ErrorNotice error={error ?? page.error} />}
      {page.loading && page.data === undefined ? (
        <Loading />
      ) : (
        <Table
          caption="Block list"
          head={['Value', 'Actions']}
          rows={items.length}
          empty={q !== '' ? `No entry contains "${q}".` : 'The block list is empty.'}
        >
          {items.map((v) => (
            <tr key={v}>
              <td>
                <AddressText value={v} />
              </td>
              <td>
                <ActionButton kind="danger" label={`Remove ${readableAddress(v)}`} onClick={() => remove(v)}>
                  Remove
                </ActionButton>
              </td>
            </tr>
          ))}
        </Table>
      )}
      <SuppressionPager org={org} list="block" q={q} cursor={cursor} next={page.data?.next_cursor} />
    </Section>
  );
}
