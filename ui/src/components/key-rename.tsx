import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiFailure } from '../api/client';
import { keysApi, type ApiKey } from '../api/keys';
import { ErrorNotice, Field, Section } from './ui';

/** The longest name the admin API takes (src/resources/inputs.ts, KeyName). */
export const KEY_NAME_MAX = 100;

/** What is wrong with a typed name, in words; undefined when it may be sent (empty clears the name). */
export function keyNameProblem(name: string): string | undefined {
  if (name.trim().length > KEY_NAME_MAX) return `at most ${KEY_NAME_MAX} characters`;
  return undefined;
}

/**
 * Renaming one key (issue 29): a label for people, such as the server or app that holds it. An
 * empty name clears it. Takes focus when it opens; Escape or Cancel closes it and gives focus back
 * to the button that opened it, as the rotation form does.
 */
export function KeyRenameForm(props: { org: string; apiKey: ApiKey; onRenamed: (k: ApiKey) => void; onCancel: () => void }) {
  const [name, setName] = useState(props.apiKey.name ?? '');
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const form = useRef<HTMLFormElement>(null);
  const opener = useRef<Element | null>(null);
  const id = props.apiKey.id;
  // Again for another key's Rename: the page keeps this form and passes the new key.
  // biome-ignore lint/correctness/useExhaustiveDependencies: `id` is the trigger, not a value read.
  useEffect(() => {
    opener.current = document.activeElement;
    setName(props.apiKey.name ?? '');
    setError(undefined);
    form.current?.querySelector('input')?.focus();
  }, [id]);
  const cancel = () => {
    const back = opener.current;
    props.onCancel();
    if (back instanceof HTMLElement && back.isConnected) back.focus();
  };
  const invalid = keyNameProblem(name);
  const submit = async (e: Event) => {
    e.preventDefault();
    if (invalid !== undefined) return;
    setBusy(true);
    setError(undefined);
    try {
      const trimmed = name.trim();
      props.onRenamed(await keysApi.update(props.org, id, { name: trimmed === '' ? null : trimmed }));
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  const serverField = error instanceof ApiFailure ? error.fieldIssues().name : undefined;
  return (
    <Section title={`Rename key ${id}`}>
      <form
        ref={form}
        class="key-rename-form"
        onSubmit={submit}
        aria-label={`Rename key ${id}`}
        onKeyDown={(e) => {
          if (e.key !== 'Escape') return;
          e.preventDefault();
          cancel();
        }}
      >
        <Field
          label="Name"
          value={name}
          onValue={setName}
          autoComplete="off"
          error={invalid ?? serverField}
          hint="Who holds it, e.g. “Billing server”. Leave empty to remove the name."
        />
        {serverField === undefined && <ErrorNotice error={error} />}
        <div class="org-form-actions">
          <button class="btn btn-primary" type="submit" disabled={busy || invalid !== undefined}>
            Save name
          </button>
          <button class="btn btn-plain" type="button" onClick={cancel}>
            Cancel
          </button>
        </div>
      </form>
    </Section>
  );
}
