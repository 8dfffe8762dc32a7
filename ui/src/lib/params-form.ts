/**
 * The preview's sample-parameters form (pure, no DOM): a template's parameter schema → the
 * fields to show, and the values typed there → `template_params` with the types a JSON send
 * would carry. Values the server must judge are passed on as typed (a number field holding
 * "abc" goes as the text), so the preview shows the very issue a send would get.
 */
import type { ParamSpec, ParamType } from '../api/template-types.js';

export type SampleInput = 'text' | 'email' | 'url' | 'number' | 'textarea' | 'select' | 'boolean';

export interface SampleField {
  name: string;
  type: ParamType;
  input: SampleInput;
  required: boolean;
  /** For `select`: the allowed values; `boolean` offers true and false. */
  options: string[];
  /** `1` for integers, `any` for numbers. */
  step?: string;
  /** What the schema asks, in words (shown under the input). */
  hint: string;
}

/** The sample values as typed: text per field, keyed by parameter name. */
export type SampleValues = Record<string, string>;

const NUMBER_TEXT = /^-?\d+(\.\d+)?([eE][+-]?\d+)?$/;

function inputFor(spec: ParamSpec): SampleInput {
  if (spec.enum !== undefined && spec.enum.length > 0) return 'select';
  switch (spec.type) {
    case 'boolean':
      return 'boolean';
    case 'integer':
    case 'number':
      return 'number';
    case 'email':
      return 'email';
    case 'url':
      return 'url';
    case 'html':
      return 'textarea';
    default:
      return 'text';
  }
}

/** The schema's rules in a few words: "integer, at least 1", "string, 2–40 characters". */
export function describeSpec(spec: ParamSpec): string {
  const parts: string[] = [spec.type === 'date' ? 'date (YYYY-MM-DD)' : spec.type];
  if (spec.min_length !== undefined && spec.max_length !== undefined)
    parts.push(`${spec.min_length}–${spec.max_length} characters`);
  else if (spec.min_length !== undefined) parts.push(`at least ${spec.min_length} characters`);
  else if (spec.max_length !== undefined) parts.push(`at most ${spec.max_length} characters`);
  if (spec.minimum !== undefined) parts.push(`at least ${spec.minimum}`);
  if (spec.maximum !== undefined) parts.push(`at most ${spec.maximum}`);
  if (spec.pattern !== undefined) parts.push(`matching ${spec.pattern}`);
  if (spec.description !== undefined && spec.description !== '') parts.push(spec.description);
  return parts.join(', ');
}

export function sampleFields(specs: readonly ParamSpec[]): SampleField[] {
  return specs.map((spec) => {
    const input = inputFor(spec);
    const field: SampleField = {
      name: spec.name,
      type: spec.type,
      input,
      required: spec.required === true,
      options: input === 'select' ? (spec.enum ?? []).map(String) : input === 'boolean' ? ['true', 'false'] : [],
      hint: describeSpec(spec),
    };
    if (spec.type === 'integer') field.step = '1';
    else if (spec.type === 'number') field.step = 'any';
    return field;
  });
}

/**
 * The samples for a (changed) schema: values of parameters still declared are kept, the
 * others dropped; a new parameter starts empty, or with its only allowed value.
 */
export function carrySamples(specs: readonly ParamSpec[], previous: SampleValues): SampleValues {
  const out: SampleValues = {};
  for (const spec of specs) {
    const kept = previous[spec.name];
    if (kept !== undefined) out[spec.name] = kept;
    else out[spec.name] = spec.enum?.length === 1 ? String(spec.enum[0]) : '';
  }
  return out;
}

/**
 * Typed text → `template_params`: empty fields are left out (so "required" is the server's to
 * say), numbers and booleans become JSON numbers and booleans when they read as such, anything
 * else is sent as typed.
 */
export function sampleParams(specs: readonly ParamSpec[], values: SampleValues): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const spec of specs) {
    const raw = values[spec.name];
    if (raw === undefined || raw === '') continue;
    if ((spec.type === 'integer' || spec.type === 'number') && NUMBER_TEXT.test(raw.trim())) out[spec.name] = Number(raw.trim());
    else if (spec.type === 'boolean' && (raw === 'true' || raw === 'false')) out[spec.name] = raw === 'true';
    else out[spec.name] = raw;
  }
  return out;
}

export interface ParamIssues {
  /** The first issue of each parameter of the form, by name. */
  byParam: Record<string, string>;
  /** Every issue, as `name: message` (for the summary, and for parameters not in the form). */
  summary: string[];
}

/** A 422's `details.issues` (each with `param` or `field`, `code`, `message`) for the form. */
export function paramIssues(details: Readonly<Record<string, unknown>> | undefined): ParamIssues {
  const byParam: Record<string, string> = {};
  const summary: string[] = [];
  const list = details?.issues;
  if (!Array.isArray(list)) return { byParam, summary };
  for (const item of list as unknown[]) {
    if (typeof item !== 'object' || item === null) continue;
    const issue = item as Record<string, unknown>;
    const name = String(issue.param ?? issue.field ?? '');
    const message = String(issue.message ?? issue.code ?? 'is invalid');
    if (name !== '' && byParam[name] === undefined) byParam[name] = message;
    summary.push(name === '' || message.startsWith(name) ? message : `${name}: ${message}`);
  }
  return { byParam, summary };
}
