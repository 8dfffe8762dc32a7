/**
 * The request log's filters: status, error code, key id, route and a UTC day range. Apply writes
 * them into the hash query, so a filtered view is a link (filter-form.tsx's plumbing).
 */
import {
  COMMON_STATUSES,
  hasRequestLogFilters,
  NO_REQUEST_LOG_FILTERS,
  type RequestLogFilters,
  requestLogFiltersToQuery,
  requestLogProblems,
} from '../lib/request-log';
import { FilterForm, useHashFilters } from './filter-form';
import { Field, Select } from './ui';

export function RequestLogFilterForm(props: { org: string; filters: RequestLogFilters }) {
  const { f, set, apply, clear, problems } = useHashFilters({
    initial: props.filters,
    empty: NO_REQUEST_LOG_FILTERS,
    segments: ['orgs', props.org, 'request-log'],
    toQuery: (filters) => requestLogFiltersToQuery(filters),
    problems: requestLogProblems,
  });
  // A status the link names that is not among the choices stays selectable.
  const statuses = COMMON_STATUSES.some(([v]) => v === f.status)
    ? COMMON_STATUSES
    : [...COMMON_STATUSES, [f.status, f.status] as const];
  return (
    <FilterForm label="Filter the request log" active={hasRequestLogFilters(props.filters)} onSubmit={apply} onClear={clear}>
      <div class="form-row">
        <Select label="Status" value={f.status} options={statuses} onValue={(v) => set({ status: v })} error={problems.status} />
        <Field
          label="Error code"
          type="search"
          name="code"
          placeholder="invalid_template_params"
          value={f.code}
          onValue={(v) => set({ code: v.trim() })}
          error={problems.code}
        />
        <Field
          label="Route"
          type="search"
          name="route"
          placeholder="/v1/send"
          value={f.route}
          onValue={(v) => set({ route: v })}
          hint="As the API names it, e.g. /api/v1.0/email/send"
        />
        <Field label="Key id" type="search" name="key_id" value={f.key_id} onValue={(v) => set({ key_id: v })} />
        <Field label="From (UTC day)" type="date" value={f.since} onValue={(v) => set({ since: v })} />
        <Field label="To (UTC day, included)" type="date" value={f.until} onValue={(v) => set({ until: v })} />
      </div>
    </FilterForm>
  );
}
