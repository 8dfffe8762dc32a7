/**
 * The parameter schema editor: one fieldset per parameter (name, type, required, the
 * constraints its type takes, description), moved with Up/Down buttons (keyboard-friendly, no
 * drag and drop), removed, or added at the end. The logic is lib/schema-form.ts.
 */
import { PARAM_TYPES } from '../api/templates';
import {
  addRow,
  constraintsFor,
  isNumericType,
  isParamType,
  moveRow,
  removeRow,
  updateRow,
  type Constraint,
  type ParamRow,
} from '../lib/schema-form';
import { Checkbox, Field, Section, Select } from './ui';

const LABELS: Record<Constraint, string> = {
  min_length: 'Min length',
  max_length: 'Max length',
  pattern: 'Pattern (regular expression)',
  minimum: 'Minimum',
  maximum: 'Maximum',
  enum: 'Allowed values',
};

export function ParamsSchema(props: {
  rows: readonly ParamRow[];
  onRows: (rows: ParamRow[]) => void;
  issues: Readonly<Record<string, string>>;
}) {
  const { rows, onRows, issues } = props;
  return (
    <Section title="Parameters">
      {rows.length === 0 && <p class="hint">No parameters declared: sends may pass any values (unless strict).</p>}
      {rows.map((row, i) => (
        <ParamRowEditor
          key={row.key}
          row={row}
          index={i}
          count={rows.length}
          issues={issues}
          onChange={(change) => onRows(updateRow(rows, i, change))}
          onMove={(delta) => onRows(moveRow(rows, i, delta))}
          onRemove={() => onRows(removeRow(rows, i))}
        />
      ))}
      <button type="button" class="btn" onClick={() => onRows(addRow(rows))}>
        Add parameter
      </button>
    </Section>
  );
}

function ParamRowEditor(props: {
  row: ParamRow;
  index: number;
  count: number;
  issues: Readonly<Record<string, string>>;
  onChange: (change: Partial<Omit<ParamRow, 'key'>>) => void;
  onMove: (delta: -1 | 1) => void;
  onRemove: () => void;
}) {
  const { row, index, issues, onChange } = props;
  const at = (field: string) => issues[`params.${index}.${field}`];
  const title = row.name === '' ? `Parameter ${index + 1}` : row.name;
  const numeric = isNumericType(row.type);
  const constraint = (c: Constraint) => (
    <Field
      key={c}
      label={LABELS[c]}
      value={row[c]}
      onValue={(v) => onChange({ [c]: v })}
      error={at(c)}
      inputMode={c === 'pattern' || c === 'enum' ? 'text' : c === 'minimum' || c === 'maximum' ? 'decimal' : 'numeric'}
      hint={c === 'enum' ? `Comma-separated ${numeric ? 'numbers' : 'values'}, or a JSON array` : undefined}
    />
  );
  return (
    <fieldset class="param-row">
      <legend>{`Parameter ${index + 1}`}</legend>
      <div class="form-row">
        <Field label="Name" value={row.name} onValue={(v) => onChange({ name: v })} error={at('name')} required />
        <Select
          label="Type"
          value={row.type}
          options={PARAM_TYPES.map((t) => [t, t] as const)}
          onValue={(v) => {
            if (isParamType(v)) onChange({ type: v });
          }}
          error={at('type')}
        />
        <Checkbox label="Required" checked={row.required} onChecked={(v) => onChange({ required: v })} />
      </div>
      <div class="form-row">{constraintsFor(row.type).map(constraint)}</div>
      <Field label="Description" value={row.description} onValue={(v) => onChange({ description: v })} />
      <div class="row-actions">
        <button
          type="button"
          class="btn btn-small"
          disabled={index === 0}
          onClick={() => props.onMove(-1)}
          aria-label={`Move ${title} up`}
        >
          Up
        </button>
        <button
          type="button"
          class="btn btn-small"
          disabled={index === props.count - 1}
          onClick={() => props.onMove(1)}
          aria-label={`Move ${title} down`}
        >
          Down
        </button>
        <button type="button" class="btn btn-small btn-danger" onClick={props.onRemove} aria-label={`Remove ${title}`}>
          Remove
        </button>
      </div>
    </fieldset>
  );
}
