/**
 * The few building blocks every page uses, so pages look and behave alike: labelled fields
 * with their error beside them, tables, notices, buttons that show progress, a copy button.
 * Every control has a visible label (or aria-label) and keeps the browser's focus ring.
 */
import './narrow.css';
import type { ComponentChildren } from 'preact';
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { ApiFailure } from '../api/client';
import { statusLabel } from '../lib/status-labels';

let nextId = 0;
/** A stable id per component instance, for label/for and aria-describedby pairs. */
export function useId(prefix: string): string {
  const [id] = useState(() => `${prefix}-${++nextId}`);
  return id;
}

export function PageHeader(props: { title: string; children?: ComponentChildren }) {
  return (
    <header class="page-header">
      <h1>{props.title}</h1>
      {props.children !== undefined && <div class="page-actions">{props.children}</div>}
    </header>
  );
}

export function Section(props: { title: string; children: ComponentChildren }) {
  return (
    <section class="card" aria-label={props.title}>
      <h2>{props.title}</h2>
      {props.children}
    </section>
  );
}

/** The input attributes pages use; kept narrow so every field stays a plain labelled input. */
interface InputProps {
  type?: 'text' | 'password' | 'email' | 'url' | 'number' | 'search' | 'date' | 'datetime-local';
  name?: string;
  placeholder?: string;
  autoComplete?: string;
  required?: boolean;
  disabled?: boolean;
  readOnly?: boolean;
  min?: number | string;
  max?: number | string;
  step?: number | string;
  inputMode?: 'text' | 'numeric' | 'decimal' | 'email' | 'url';
  /** Off for ids and codes, which a phone must not capitalize or "correct". */
  spellcheck?: boolean;
  autocapitalize?: 'off' | 'none' | 'sentences' | 'words' | 'characters';
}

/** A labelled text input; `error` is shown under it and announced with the field. */
export function Field(
  props: InputProps & { label: string; value: string; onValue: (v: string) => void; error?: string | undefined; hint?: string },
) {
  const { label, value, onValue, error, hint, ...rest } = props;
  const id = useId('f');
  return (
    <div class={`field${error !== undefined ? ' has-error' : ''}`}>
      <label for={id}>{label}</label>
      <input
        {...(rest as object)}
        id={id}
        value={value}
        onInput={(e) => onValue((e.target as HTMLInputElement).value)}
        aria-invalid={error !== undefined ? 'true' : undefined}
        aria-describedby={error !== undefined ? `${id}-err` : hint !== undefined ? `${id}-hint` : undefined}
      />
      {hint !== undefined && error === undefined && (
        <small id={`${id}-hint`} class="hint">
          {hint}
        </small>
      )}
      {error !== undefined && (
        <small id={`${id}-err`} class="field-error" role="alert">
          {error}
        </small>
      )}
    </div>
  );
}

export function Checkbox(props: { label: string; checked: boolean; onChecked: (v: boolean) => void; disabled?: boolean }) {
  const id = useId('c');
  return (
    <div class="field checkbox">
      <input
        id={id}
        type="checkbox"
        checked={props.checked}
        disabled={props.disabled}
        onChange={(e) => props.onChecked((e.target as HTMLInputElement).checked)}
      />
      <label for={id}>{props.label}</label>
    </div>
  );
}

export function Select(props: {
  label: string;
  value: string;
  options: ReadonlyArray<readonly [string, string]>;
  onValue: (v: string) => void;
  error?: string | undefined;
}) {
  const id = useId('s');
  return (
    <div class={`field${props.error !== undefined ? ' has-error' : ''}`}>
      <label for={id}>{props.label}</label>
      <select id={id} value={props.value} onChange={(e) => props.onValue((e.target as HTMLSelectElement).value)}>
        {props.options.map(([value, text]) => (
          <option key={value} value={value}>
            {text}
          </option>
        ))}
      </select>
      {props.error !== undefined && (
        <small class="field-error" role="alert">
          {props.error}
        </small>
      )}
    </div>
  );
}

/** A notice: `error` for failures (role=alert), `ok` for confirmations, `info` otherwise. */
export function Notice(props: { kind: 'error' | 'ok' | 'info'; children: ComponentChildren }) {
  return (
    <div class={`notice notice-${props.kind}`} role={props.kind === 'error' ? 'alert' : 'status'}>
      {props.children}
    </div>
  );
}

/** Shows an API failure (code and message) or any other error. */
export function ErrorNotice(props: { error: unknown }) {
  if (props.error === undefined || props.error === null) return null;
  const e = props.error;
  if (e instanceof ApiFailure)
    return (
      <Notice kind="error">
        <strong>{e.code}</strong>: {e.message}
      </Notice>
    );
  return <Notice kind="error">{e instanceof Error ? e.message : String(e)}</Notice>;
}

/** A button that runs an async action, disabled while it runs. */
export function ActionButton(props: {
  onClick: () => Promise<void> | void;
  children: ComponentChildren;
  kind?: 'primary' | 'danger' | 'plain';
  disabled?: boolean;
  label?: string;
  type?: 'button' | 'submit';
}) {
  const [busy, setBusy] = useState(false);
  return (
    <button
      type={props.type ?? 'button'}
      class={`btn btn-${props.kind ?? 'plain'}`}
      disabled={busy || props.disabled === true}
      aria-busy={busy ? 'true' : undefined}
      aria-label={props.label}
      onClick={async () => {
        setBusy(true);
        try {
          await props.onClick();
        } finally {
          setBusy(false);
        }
      }}
    >
      {props.children}
    </button>
  );
}

/**
 * Copies a value to the clipboard and says so in a live region. The clipboard API is missing on
 * plain http away from localhost, and writeText can be refused: then nothing is claimed, the
 * text is selected instead (the `target` element's, or the value in a readonly field shown for
 * it, which takes focus) and the operator is told to copy it with Ctrl+C.
 */
export function CopyButton(props: { value: string; label?: string; target?: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const field = useRef<HTMLInputElement>(null);
  const fallback = state === 'failed' && props.target === undefined;
  // The readonly field exists from the render that shows it: select it in that same commit. A
  // plain effect ran after the paint, so the "Copy failed" status could be read (and was, by
  // test/ui/e2e/keyboard.test.ts, once in three full runs) while focus was still on the button.
  useLayoutEffect(() => {
    if (!fallback || field.current === null) return;
    field.current.focus();
    field.current.select();
  }, [fallback]);
  useEffect(() => () => clearTimeout(timer.current), []);
  const copy = async () => {
    clearTimeout(timer.current);
    try {
      // Undefined outside a secure context, whatever the type says.
      const clipboard = navigator.clipboard as Clipboard | undefined;
      if (clipboard === undefined) throw new Error('no clipboard');
      await clipboard.writeText(props.value);
      setState('copied');
      timer.current = setTimeout(() => setState('idle'), 2000);
    } catch {
      setState('failed');
      const target = props.target === undefined ? null : document.getElementById(props.target);
      if (target !== null) window.getSelection()?.selectAllChildren(target);
    }
  };
  return (
    <>
      <button
        type="button"
        class="btn btn-plain btn-small"
        aria-label={props.label ?? 'Copy to clipboard'}
        onClick={() => void copy()}
      >
        {state === 'copied' ? 'Copied' : 'Copy'}
      </button>
      {fallback && (
        <input
          ref={field}
          class="copy-fallback"
          type="text"
          readOnly
          value={props.value}
          aria-label="Text to copy"
          onFocus={(e) => (e.target as HTMLInputElement).select()}
        />
      )}
      <span class="copy-status" role="status">
        {state === 'copied' && <span class="visually-hidden">Copied to the clipboard</span>}
        {state === 'failed' && 'Copy failed — select and copy (Ctrl+C)'}
      </span>
    </>
  );
}

export { Table } from './table';

export function Loading() {
  return (
    <p class="loading" role="status">
      Loading…
    </p>
  );
}

/**
 * A status word as a coloured badge (colour is never the only signal: the word is there). The
 * class comes from the raw value, the text from lib/status-labels.ts; when they differ the raw
 * value is the tooltip.
 */
export function Badge(props: { value: string }) {
  const label = statusLabel(props.value);
  return (
    <span class={`badge badge-${props.value.replace(/[^a-z_]/g, '')}`} title={label !== props.value ? props.value : undefined}>
      {label}
    </span>
  );
}

/**
 * "First page" / "Next page" links of a cursor-paged list kept in the hash query; nothing when
 * neither is given (`first`: the list is on a later page; `next`: the server has more).
 */
export function Pager(props: { first?: string | false | undefined; next?: string | false | undefined }) {
  const { first, next } = props;
  if ((first === undefined || first === false) && (next === undefined || next === false)) return null;
  return (
    <nav class="pager" aria-label="Pages">
      {first !== undefined && first !== false && (
        <a class="btn btn-plain" href={first}>
          First page
        </a>
      )}
      {next !== undefined && next !== false && (
        <a class="btn btn-plain" href={next}>
          Next page
        </a>
      )}
    </nav>
  );
}
