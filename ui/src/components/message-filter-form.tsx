/**
 * The messages list's filter form. Submitting writes the filters into the hash query, so the
 * list reloads from the link and a filtered view can be bookmarked or shared.
 */
import {
  filterProblems,
  filtersToQuery,
  hasFilters,
  type MessageFilters,
  NO_FILTERS,
  STATUSES,
  toggleStatus,
} from '../lib/message-filters';
import { statusLabel } from '../lib/status-labels';
import { type Mode, modeQuery } from '../lib/test-mode';
import { FilterForm, useHashFilters } from './filter-form';
import { Field, useId } from './ui';

/** A select of ids from a list the page loaded, or a plain text field when none loaded. */
export function IdChoice(props: {
  label: string;
  value: string;
  ids: readonly string[] | undefined;
  onValue: (v: string) => void;
}) {
  const id = useId('idc');
  if (props.ids === undefined || props.ids.length === 0)
    return <Field label={props.label} value={props.value} onValue={props.onValue} />;
  const ids = props.value !== '' && !props.ids.includes(props.value) ? [props.value, ...props.ids] : props.ids;
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      <select id={id} value={props.value} onChange={(e) => props.onValue((e.target as HTMLSelectElement).value)}>
        <option value="">Any</option>
        {ids.map((v) => (
          <option key={v} value={v}>
            {v}
          </option>
        ))}
      </select>
    </div>
  );
}

export function MessageFilterForm(props: {
  org: string;
  filters: MessageFilters;
  /** Kept in the link the filters write (live is the default and left out). */
  mode: Mode;
  templates?: string[];
  services?: string[];
}) {
  const { f, set, problems, apply, clear } = useHashFilters({
    initial: props.filters,
    empty: NO_FILTERS,
    segments: ['orgs', props.org, 'messages'],
    toQuery: (filters) => ({ ...filtersToQuery(filters), ...modeQuery(props.mode) }),
    problems: filterProblems,
  });
  return (
    <FilterForm label="Filter messages" active={hasFilters(props.filters)} onSubmit={apply} onClear={clear}>
      <fieldset class="status-choices">
        <legend>Status</legend>
        {STATUSES.map((s) => (
          <label key={s} class="status-choice" title={statusLabel(s) !== s ? s : undefined}>
            <input
              type="checkbox"
              name="status"
              value={s}
              checked={f.statuses.includes(s)}
              onChange={(e) => set({ statuses: toggleStatus(f.statuses, s, (e.target as HTMLInputElement).checked) })}
            />
            {statusLabel(s)}
          </label>
        ))}
        {problems.status !== undefined && (
          <small class="field-error" role="alert">
            {problems.status}
          </small>
        )}
      </fieldset>
      <div class="form-row">
        <IdChoice label="Template" value={f.template_id} ids={props.templates} onValue={(v) => set({ template_id: v })} />
        <IdChoice label="Service" value={f.service_id} ids={props.services} onValue={(v) => set({ service_id: v })} />
        <Field label="From (UTC day)" type="date" value={f.from} onValue={(v) => set({ from: v })} error={problems.from} />
        <Field label="To (UTC day, included)" type="date" value={f.to} onValue={(v) => set({ to: v })} error={problems.to} />
        <Field
          label="Recipient contains"
          type="search"
          name="recipient"
          placeholder="ada@ or example.com"
          value={f.recipient}
          onValue={(v) => set({ recipient: v })}
          hint="Part of a to, cc or bcc address"
        />
        {/* A link made before the search may name one exact address: shown so it can be seen and cleared. */}
        {(props.filters.q !== '' || f.q !== '') && (
          <Field
            label="Recipient (exact)"
            type="search"
            name="q"
            value={f.q}
            onValue={(v) => set({ q: v })}
            hint="The whole address"
          />
        )}
        <Field
          label="Subject contains"
          type="search"
          name="subject"
          value={f.subject}
          onValue={(v) => set({ subject: v })}
          hint="Any case, any language"
        />
        <Field
          label="Message id"
          type="search"
          name="message_id"
          placeholder="msg_…"
          value={f.message_id}
          onValue={(v) => set({ message_id: v })}
          hint="Exactly as pasted"
          spellcheck={false}
          autocapitalize="off"
        />
      </div>
    </FilterForm>
  );
}
