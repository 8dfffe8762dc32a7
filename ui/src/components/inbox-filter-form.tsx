/**
 * The test inbox's filters: a recipient, a template and free text. Submitting writes them into
 * the hash query (`#/orgs/acme/test-inbox?to=…`), so the list reloads from the link (the plumbing:
 * filter-form.tsx, shared with the Messages filters).
 */
import { hasInboxFilters, type InboxFilters, inboxFiltersToQuery, NO_INBOX_FILTERS } from '../lib/inbox-filters';
import { FilterForm, useHashFilters } from './filter-form';
import { IdChoice } from './message-filter-form';
import { Field } from './ui';

export function InboxFilterForm(props: { org: string; filters: InboxFilters; templates?: string[] }) {
  const { f, set, apply, clear } = useHashFilters({
    initial: props.filters,
    empty: NO_INBOX_FILTERS,
    segments: ['orgs', props.org, 'test-inbox'],
    // Trimmed there (a pasted address keeps no spaces).
    toQuery: (filters) => inboxFiltersToQuery(filters),
  });
  return (
    <FilterForm label="Filter the test inbox" active={hasInboxFilters(props.filters)} onSubmit={apply} onClear={clear}>
      <div class="form-row">
        <Field
          label="Recipient"
          type="search"
          name="to"
          placeholder="ada@example.com"
          value={f.to}
          onValue={(v) => set({ to: v })}
          hint="The exact address (to, cc or bcc)"
        />
        <IdChoice label="Template" value={f.template_id} ids={props.templates} onValue={(v) => set({ template_id: v })} />
        <Field
          label="Search"
          type="search"
          name="q"
          placeholder="order"
          value={f.q}
          onValue={(v) => set({ q: v })}
          hint="Subject, sender or an address"
        />
      </div>
    </FilterForm>
  );
}
