/**
 * The parameter-schema editor's logic (pure, no DOM): a template's `params` as editable rows of
 * text, and back. Rows hold text so a half-typed number is kept as typed; turning rows into
 * ParamSpecs checks what the server would refuse (src/templates/check.ts, ParamSpecInput), so
 * the operator sees it beside the input before saving.
 */
import { PARAM_TYPES, type ParamSpec, type ParamType } from '../api/template-types.js';

export interface ParamRow {
  /** Stable per row while editing (list keys, label ids); not sent. */
  key: number;
  name: string;
  type: ParamType;
  required: boolean;
  min_length: string;
  max_length: string;
  minimum: string;
  maximum: string;
  pattern: string;
  /** Allowed values, comma-separated; a JSON array when a value holds a comma. */
  enum: string;
  description: string;
}

export type Constraint = 'min_length' | 'max_length' | 'pattern' | 'minimum' | 'maximum' | 'enum';

const NUMERIC: ReadonlySet<ParamType> = new Set(['integer', 'number']);
const NAME = /^[A-Za-z_][A-Za-z0-9_.-]{0,63}$/;
const NUMBER_TEXT = /^-?\d+(\.\d+)?([eE][+-]?\d+)?$/;

export const isNumericType = (type: ParamType): boolean => NUMERIC.has(type);

/** The constraints the server applies to a type (params.ts): lengths and patterns to text, bounds to numbers. */
export function constraintsFor(type: ParamType): readonly Constraint[] {
  if (type === 'boolean') return [];
  if (NUMERIC.has(type)) return ['minimum', 'maximum', 'enum'];
  return ['min_length', 'max_length', 'pattern', 'enum'];
}

export function isParamType(value: string): value is ParamType {
  return (PARAM_TYPES as readonly string[]).includes(value);
}

export function emptyRow(key: number, name = ''): ParamRow {
  return {
    key,
    name,
    type: 'string',
    required: false,
    min_length: '',
    max_length: '',
    minimum: '',
    maximum: '',
    pattern: '',
    enum: '',
    description: '',
  };
}

const text = (n: number | undefined): string => (n === undefined ? '' : String(n));

export function enumText(values: ReadonlyArray<string | number> | undefined): string {
  if (values === undefined) return '';
  return values.some((v) => String(v).includes(',')) ? JSON.stringify(values) : values.join(', ');
}

export function rowFromSpec(spec: ParamSpec, key: number): ParamRow {
  return {
    key,
    name: spec.name,
    type: spec.type,
    required: spec.required === true,
    min_length: text(spec.min_length),
    max_length: text(spec.max_length),
    minimum: text(spec.minimum),
    maximum: text(spec.maximum),
    pattern: spec.pattern ?? '',
    enum: enumText(spec.enum),
    description: spec.description ?? '',
  };
}

export function rowsFromSpecs(specs: readonly ParamSpec[], firstKey = 1): ParamRow[] {
  return specs.map((s, i) => rowFromSpec(s, firstKey + i));
}

/** A new row at the end, named `param1`, `param2`… (the first name not taken). */
export function addRow(rows: readonly ParamRow[]): ParamRow[] {
  const key = rows.reduce((m, r) => Math.max(m, r.key), 0) + 1;
  const taken = new Set(rows.map((r) => r.name));
  let n = rows.length + 1;
  while (taken.has(`param${n}`)) n++;
  return [...rows, emptyRow(key, `param${n}`)];
}

export function removeRow(rows: readonly ParamRow[], index: number): ParamRow[] {
  return rows.filter((_, i) => i !== index);
}

/** Moves a row up (-1) or down (+1); out of range is no change. */
export function moveRow(rows: readonly ParamRow[], index: number, delta: -1 | 1): ParamRow[] {
  const to = index + delta;
  if (index < 0 || index >= rows.length || to < 0 || to >= rows.length) return [...rows];
  const out = [...rows];
  const [row] = out.splice(index, 1);
  out.splice(to, 0, row as ParamRow);
  return out;
}

export function updateRow(rows: readonly ParamRow[], index: number, change: Partial<Omit<ParamRow, 'key'>>): ParamRow[] {
  return rows.map((r, i) => (i === index ? { ...r, ...change } : r));
}

/** Comma-separated values (or a JSON array) → the list; undefined for blank. */
export function parseEnum(value: string, numeric: boolean): { values?: Array<string | number>; error?: string } {
  const raw = value.trim();
  if (raw === '') return {};
  let items: unknown[];
  if (raw.startsWith('[')) {
    try {
      const parsed: unknown = JSON.parse(raw);
      if (!Array.isArray(parsed)) return { error: 'must be a JSON array or comma-separated values' };
      items = parsed;
    } catch {
      return { error: 'is not a valid JSON array' };
    }
  } else {
    items = raw
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '');
  }
  if (items.length === 0) return {};
  if (numeric) {
    const numbers = items.map((v) =>
      typeof v === 'number' ? v : typeof v === 'string' && NUMBER_TEXT.test(v.trim()) ? Number(v) : Number.NaN,
    );
    if (numbers.some((n) => !Number.isFinite(n))) return { error: 'values must all be numbers' };
    return { values: numbers };
  }
  if (items.some((v) => typeof v !== 'string' && typeof v !== 'number')) return { error: 'values must be text' };
  return { values: items.map(String) };
}

/**
 * Rows → the `params` a PUT takes, and the problems found, keyed like the server's field names
 * (`params.0.name`) so local and server issues land on the same inputs. Constraints that do
 * not apply to a row's type are left out (they stay in the row, in case the type goes back).
 */
export function rowsToSpecs(rows: readonly ParamRow[]): { specs: ParamSpec[]; issues: Record<string, string> } {
  const issues: Record<string, string> = {};
  const seen = new Set<string>();
  const specs = rows.map((row, i) => {
    const at = (field: string) => `params.${i}.${field}`;
    const name = row.name.trim();
    if (!NAME.test(name)) issues[at('name')] = 'must start with a letter or _ and hold only letters, digits, _ . - (at most 64)';
    else if (seen.has(name)) issues[at('name')] = `"${name}" is declared twice`;
    seen.add(name);
    const spec: ParamSpec = { name, type: row.type };
    if (row.required) spec.required = true;
    const allowed = constraintsFor(row.type);
    const count = (field: 'min_length' | 'max_length') => {
      const v = row[field].trim();
      if (v === '' || !allowed.includes(field)) return;
      if (!/^\d+$/.test(v)) issues[at(field)] = 'must be a whole number, 0 or more';
      else spec[field] = Number(v);
    };
    const bound = (field: 'minimum' | 'maximum') => {
      const v = row[field].trim();
      if (v === '' || !allowed.includes(field)) return;
      if (!NUMBER_TEXT.test(v)) issues[at(field)] = 'must be a number';
      else if (row.type === 'integer' && !Number.isInteger(Number(v)))
        issues[at(field)] = 'must be a whole number for an integer';
      else spec[field] = Number(v);
    };
    count('min_length');
    count('max_length');
    bound('minimum');
    bound('maximum');
    if (spec.min_length !== undefined && spec.max_length !== undefined && spec.min_length > spec.max_length) {
      issues[at('max_length')] = 'is less than the minimum length';
    }
    if (spec.minimum !== undefined && spec.maximum !== undefined && spec.minimum > spec.maximum) {
      issues[at('maximum')] = 'is less than the minimum';
    }
    if (allowed.includes('pattern') && row.pattern !== '') {
      try {
        new RegExp(row.pattern, 'u');
        spec.pattern = row.pattern;
      } catch (err) {
        issues[at('pattern')] = `is not a valid regular expression: ${err instanceof Error ? err.message : String(err)}`;
      }
    }
    if (allowed.includes('enum')) {
      const parsed = parseEnum(row.enum, isNumericType(row.type));
      if (parsed.error !== undefined) issues[at('enum')] = parsed.error;
      else if (parsed.values !== undefined) spec.enum = parsed.values;
    }
    if (row.description.trim() !== '') spec.description = row.description.trim();
    return spec;
  });
  return { specs, issues };
}
