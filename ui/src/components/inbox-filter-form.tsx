/**
 * The test inbox's filters: a recipient, a template and free text. Submitting writes them into
 * the hash query (`#/orgs/acme/test-inbox?to=…`), so the list reloads from the link.
 */
import { useState } from 'preact/hooks';
import { hrefWithQuery } from '../lib/route-match';
import { type InboxFilters, inboxFiltersToQuery, NO_INBOX_FILTERS } from '../lib/test-mode';
import { navigate } from '../router';
import { IdChoice } from './message-filter-form';
import { Field } from './ui';

export function InboxFilterForm(props: { org: string; filters: InboxFilters; templates?: string[] }) {
  const [f, setF] = useState<InboxFilters>(props.filters);
  const set = (patch: Partial<InboxFilters>) => setF({ ...f, ...patch });
  const go = (filters: InboxFilters) => navigate(hrefWithQuery(['orgs', props.org, 'test-inbox'], inboxFiltersToQuery(filters)));
  return (
    <form
      class="card message-filters"
      aria-label="Filter the test inbox"
      onSubmit={(e) => {
        e.preventDefault();
        go({ to: f.to.trim(), template_id: f.template_id.trim(), q: f.q.trim() });
      }}
    >
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
      <div class="form-actions">
        <button type="submit" class="btn btn-primary">
          Apply filters
        </button>
        <button
          type="button"
          class="btn btn-plain"
          onClick={() => {
            setF(NO_INBOX_FILTERS);
            go(NO_INBOX_FILTERS);
          }}
        >
          Clear
        </button>
      </div>
    </form>
  );
}
