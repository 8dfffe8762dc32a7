/**
 * A service's failover chain as pickers (issue 29): an ordered list of selects, each offering
 * the organization's other services (never this one, never one picked in another row), with
 * Move up, Move down and Remove per row and "Add a failover service" under them. The value is
 * the ids one per line, as the form holds a list (service-form.ts pickedServices).
 */
import { pickedServices, servicesText } from './service-form';
import { useId } from './ui';

export function FailoverPickers(props: {
  label: string;
  hint: string | undefined;
  /** The ids one per line, in order. */
  value: string;
  /** The organization's other services (this one left out), in their list's order. */
  services: readonly string[];
  error: string | undefined;
  onValue: (v: string) => void;
}) {
  const id = useId('fo');
  const ids = pickedServices(props.value);
  const set = (next: string[]) => props.onValue(servicesText(next));
  const free = (keep: string) => props.services.filter((s) => s === keep || !ids.includes(s));
  const move = (from: number, to: number) => {
    const next = [...ids];
    const [moved] = next.splice(from, 1);
    next.splice(to, 0, moved as string);
    set(next);
  };
  const firstFree = props.services.find((s) => !ids.includes(s));
  return (
    <fieldset class={`field failover${props.error !== undefined ? ' has-error' : ''}`} aria-describedby={`${id}-hint`}>
      <legend>{props.label}</legend>
      {ids.length === 0 && <p class="hint">None: while this service's breaker is open its messages wait.</p>}
      <ol class="failover-list">
        {ids.map((current, i) => {
          const n = i + 1;
          // A stored id of a service deleted since stays shown, so the save does not drop it unseen.
          const options = current === '' || props.services.includes(current) ? free(current) : [current, ...free(current)];
          return (
            <li key={current} class="failover-row">
              <label for={`${id}-${n}`} class="visually-hidden">
                Failover service {n}
              </label>
              <select
                id={`${id}-${n}`}
                value={current}
                onChange={(e) => set(ids.map((v, j) => (j === i ? (e.target as HTMLSelectElement).value : v)))}
              >
                {current === '' && <option value="">Pick a service</option>}
                {options.map((s) => (
                  <option key={s} value={s}>
                    {props.services.includes(s) ? s : `${s} (no such service)`}
                  </option>
                ))}
              </select>
              <button
                type="button"
                class="btn btn-plain"
                aria-label={`Move failover service ${n} up`}
                disabled={i === 0}
                onClick={() => move(i, i - 1)}
              >
                ↑
              </button>
              <button
                type="button"
                class="btn btn-plain"
                aria-label={`Move failover service ${n} down`}
                disabled={i === ids.length - 1}
                onClick={() => move(i, i + 1)}
              >
                ↓
              </button>
              <button
                type="button"
                class="btn btn-plain"
                aria-label={`Remove failover service ${n}`}
                onClick={() => set(ids.filter((_, j) => j !== i))}
              >
                Remove
              </button>
            </li>
          );
        })}
      </ol>
      <button
        type="button"
        class="btn btn-plain"
        disabled={firstFree === undefined}
        onClick={() => firstFree !== undefined && set([...ids, firstFree])}
      >
        Add a failover service
      </button>
      <small id={`${id}-hint`} class="hint">
        {firstFree === undefined && props.services.length === 0
          ? 'The organization has no other service to fail over to.'
          : props.hint}
      </small>
      {props.error !== undefined && (
        <small class="field-error" role="alert">
          {props.error}
        </small>
      )}
    </fieldset>
  );
}
