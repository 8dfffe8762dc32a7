/**
 * The id field of the create forms (organization, service, template). The admin API's PUT
 * creates or replaces, so a create form first asks whether the id is taken (`idTaken`) and,
 * when it is, says so under the field with a link to the existing one instead of overwriting it.
 */
import { ApiFailure } from '../api/client';
import { useId } from './ui';

/** True when GET finds the resource, false on 404; any other failure is thrown (nothing is written then). */
export async function idTaken(get: () => Promise<unknown>): Promise<boolean> {
  try {
    await get();
    return true;
  } catch (err) {
    if (err instanceof ApiFailure && err.status === 404) return false;
    throw err;
  }
}

/** What the field says when its id is taken: the kind of resource and where to open it. */
export interface TakenId {
  /** "An organization", "A template", "A service". */
  what: string;
  href: string;
}

/**
 * A labelled text input for a new resource's id. `taken` (set after a save found the id in use)
 * shows "… with this id already exists — open it" with the link; otherwise `error` or `hint`.
 */
export function IdField(props: {
  label: string;
  value: string;
  onValue: (v: string) => void;
  error?: string | undefined;
  taken?: TakenId | undefined;
  hint?: string;
  required?: boolean;
}) {
  const id = useId('id');
  const invalid = props.error !== undefined || props.taken !== undefined;
  return (
    <div class={`field${invalid ? ' has-error' : ''}`}>
      <label for={id}>{props.label}</label>
      <input
        id={id}
        type="text"
        autoComplete="off"
        spellcheck={false}
        required={props.required}
        value={props.value}
        onInput={(e) => props.onValue((e.target as HTMLInputElement).value)}
        aria-invalid={invalid ? 'true' : undefined}
        aria-describedby={invalid ? `${id}-err` : props.hint !== undefined ? `${id}-hint` : undefined}
      />
      {props.hint !== undefined && !invalid && (
        <small id={`${id}-hint`} class="hint">
          {props.hint}
        </small>
      )}
      {props.taken !== undefined ? (
        <small id={`${id}-err`} class="field-error" role="alert">
          {props.taken.what} with this id already exists — <a href={props.taken.href}>open it</a>
        </small>
      ) : (
        props.error !== undefined && (
          <small id={`${id}-err`} class="field-error" role="alert">
            {props.error}
          </small>
        )
      )}
    </div>
  );
}
