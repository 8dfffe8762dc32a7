import type { FieldSpec, FormValues } from './service-form';
import { ListField } from './org-settings-form';
import { FailoverPickers } from './service-failover';
import { Checkbox, Field, Select } from './ui';

/**
 * One field of the service form, by its spec. Secrets render empty with the placeholder
 * "unchanged (write-only)" when a value is stored: typing replaces it, leaving it keeps it.
 */
export function ServiceField(props: {
  spec: FieldSpec;
  values: FormValues;
  stored: boolean;
  error: string | undefined;
  onValue: (path: string, v: string | boolean) => void;
  /** The organization's other services, for a `services` field's pickers. */
  services?: readonly string[];
}) {
  const { spec, values, error } = props;
  const label = `${spec.label}${spec.required === true ? ' (required)' : ''}`;
  const text = typeof values[spec.path] === 'string' ? (values[spec.path] as string) : '';
  const set = (v: string | boolean) => props.onValue(spec.path, v);
  switch (spec.kind) {
    case 'checkbox':
      return <Checkbox label={spec.label} checked={values[spec.path] === true} onChecked={set} />;
    case 'list':
      return <ListField label={label} value={text} onValue={set} hint={spec.hint ?? 'One per line.'} error={error} />;
    case 'services':
      return (
        <FailoverPickers
          label={label}
          hint={spec.hint}
          value={text}
          services={props.services ?? []}
          error={error}
          onValue={set}
        />
      );
    case 'select':
      return (
        <Select
          label={label}
          value={text === '' ? (spec.options?.[0]?.[0] ?? '') : text}
          options={spec.options ?? []}
          onValue={set}
          error={error}
        />
      );
    case 'secret':
      return (
        <Field
          label={label}
          type="password"
          autoComplete="new-password"
          value={text}
          onValue={set}
          error={error}
          placeholder={props.stored ? 'unchanged (write-only)' : ''}
          hint={
            props.stored ? 'Stored, never shown. Type a new value to replace it.' : 'Write-only: never shown again once saved.'
          }
        />
      );
    case 'number':
      return (
        <Field
          label={label}
          type="number"
          step="any"
          value={text}
          onValue={set}
          error={error}
          {...(spec.hint !== undefined ? { hint: spec.hint } : {})}
        />
      );
    default:
      return (
        <Field
          label={label}
          value={text}
          onValue={set}
          error={error}
          autoComplete="off"
          {...(spec.hint !== undefined ? { hint: spec.hint } : {})}
        />
      );
  }
}
