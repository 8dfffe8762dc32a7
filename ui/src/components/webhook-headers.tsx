import { SECRET_MASK } from '../../../src/providers/schema.js';
import { Field } from './ui';

/**
 * An endpoint's custom request headers (issue 29), a row per header with Remove and an Add
 * button. Values are write-only, as a service's secrets are: a stored one renders empty with the
 * placeholder "unchanged (write-only)", and leaving it empty sends the API's mask back, which
 * keeps the stored value. The server's limits: 10 headers, names it does not set itself.
 */

/** src/webhooks/custom-headers.ts's MAX_CUSTOM_HEADERS. */
export const MAX_HEADERS = 10;

export interface HeaderRow {
  /** A stable key for the row while others are added and removed. */
  key: number;
  name: string;
  value: string;
  /** The name the server holds a value for (the read's mask); typing a value replaces it. */
  storedName: string | undefined;
}

let nextKey = 1;
export const headerRow = (name = '', storedName?: string): HeaderRow => ({ key: nextKey++, name, value: '', storedName });

/** The rows of a read endpoint: every header stored, its value empty. */
export const storedRows = (headers: ReadonlyArray<{ name: string }> | undefined): HeaderRow[] =>
  (headers ?? []).map((h) => headerRow(h.name, h.name));

/** What the API takes: empty rows dropped, a stored value left empty sent as the mask. */
export function headersBody(rows: readonly HeaderRow[]): Array<{ name: string; value: string }> {
  return rows
    .filter((r) => r.name.trim() !== '' || r.value !== '')
    .map((r) => ({
      name: r.name.trim(),
      value: r.value === '' && r.storedName !== undefined ? SECRET_MASK : r.value,
    }));
}

export function WebhookHeaders(props: {
  rows: HeaderRow[];
  onRows: (rows: HeaderRow[]) => void;
  /** The API's field problems by field (`headers.0.name`), in words. */
  issues: Record<string, string>;
}) {
  const { rows, onRows, issues } = props;
  // The server numbers the rows it was sent: the non-empty ones, in order.
  const sentIndex = new Map<number, number>();
  let n = 0;
  for (const r of rows) if (r.name.trim() !== '' || r.value !== '') sentIndex.set(r.key, n++);
  const set = (key: number, change: Partial<HeaderRow>) => onRows(rows.map((r) => (r.key === key ? { ...r, ...change } : r)));
  return (
    <fieldset class="header-rows">
      <legend>Custom headers</legend>
      <p class="hint">
        Sent with every request, for example <code>Authorization</code> for a receiver behind basic auth. Values are write-only:
        never shown again once saved.
      </p>
      {rows.map((r, i) => {
        const at = sentIndex.get(r.key);
        const issue = (part: 'name' | 'value') => (at === undefined ? undefined : issues[`headers.${at}.${part}`]);
        const stored = r.storedName !== undefined && r.storedName.toLowerCase() === r.name.trim().toLowerCase();
        return (
          <div class="header-row" key={r.key}>
            <Field
              label={`Header ${i + 1} name`}
              value={r.name}
              onValue={(v) => set(r.key, { name: v })}
              placeholder="Authorization"
              autoComplete="off"
              error={issue('name')}
            />
            <Field
              label={`Header ${i + 1} value`}
              type="password"
              autoComplete="new-password"
              value={r.value}
              onValue={(v) => set(r.key, { value: v })}
              placeholder={stored ? 'unchanged (write-only)' : ''}
              error={issue('value')}
            />
            <button
              type="button"
              class="btn btn-plain btn-small header-remove"
              aria-label={`Remove header ${i + 1}${r.name.trim() === '' ? '' : ` (${r.name.trim()})`}`}
              onClick={() => onRows(rows.filter((x) => x.key !== r.key))}
            >
              Remove
            </button>
          </div>
        );
      })}
      {issues.headers !== undefined && (
        <small class="field-error" role="alert">
          {issues.headers}
        </small>
      )}
      <button
        type="button"
        class="btn btn-plain btn-small"
        disabled={rows.length >= MAX_HEADERS}
        onClick={() => onRows([...rows, headerRow()])}
      >
        Add header
      </button>
      {rows.length >= MAX_HEADERS && <small class="hint"> At most {MAX_HEADERS} headers.</small>}
    </fieldset>
  );
}
