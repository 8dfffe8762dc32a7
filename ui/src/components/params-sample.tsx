/**
 * The preview's sample parameters: one input per declared parameter (lib/params-form.ts picks
 * the input), with the server's issue for that parameter under it.
 */
import type { SampleField, SampleValues } from '../lib/params-form';
import { Field, Select, useId } from './ui';

export function ParamsSample(props: {
  fields: readonly SampleField[];
  values: SampleValues;
  issues: Readonly<Record<string, string>>;
  onValues: (values: SampleValues) => void;
}) {
  const { fields, values, issues } = props;
  if (fields.length === 0) return <p class="hint">This template declares no parameters.</p>;
  const set = (name: string, value: string) => props.onValues({ ...values, [name]: value });
  return (
    <div class="sample-params">
      {fields.map((f) => {
        const label = `${f.name}${f.required ? ' (required)' : ''}`;
        const value = values[f.name] ?? '';
        const error = issues[f.name];
        if (f.input === 'select' || f.input === 'boolean') {
          return (
            <div key={f.name}>
              <Select
                label={label}
                value={value}
                options={[['', '(not set)'], ...f.options.map((o) => [o, o] as const)]}
                onValue={(v) => set(f.name, v)}
                error={error}
              />
            </div>
          );
        }
        if (f.input === 'textarea')
          return (
            <TextArea key={f.name} label={label} hint={f.hint} value={value} error={error} onValue={(v) => set(f.name, v)} />
          );
        return (
          <Field
            key={f.name}
            label={label}
            type={f.input === 'number' ? 'number' : f.input}
            step={f.step}
            hint={f.hint}
            value={value}
            onValue={(v) => set(f.name, v)}
            error={error}
          />
        );
      })}
    </div>
  );
}

function TextArea(props: {
  label: string;
  hint: string;
  value: string;
  error: string | undefined;
  onValue: (v: string) => void;
}) {
  const id = useId('ta');
  return (
    <div class={`field${props.error !== undefined ? ' has-error' : ''}`}>
      <label for={id}>{props.label}</label>
      <textarea
        id={id}
        rows={3}
        value={props.value}
        onInput={(e) => props.onValue((e.target as HTMLTextAreaElement).value)}
        aria-invalid={props.error !== undefined ? 'true' : undefined}
        aria-describedby={`${id}-${props.error !== undefined ? 'err' : 'hint'}`}
      />
      {props.error === undefined ? (
        <small id={`${id}-hint`} class="hint">
          {props.hint}
        </small>
      ) : (
        <small id={`${id}-err`} class="field-error" role="alert">
          {props.error}
        </small>
      )}
    </div>
  );
}
