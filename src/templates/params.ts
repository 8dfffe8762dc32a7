import { asciiDomainAddress } from '../domain/addresses.js';
import type { ParamSpec, Template } from '../domain/types.js';

export interface ParamIssue {
  param: string;
  code: 'required' | 'type' | 'format' | 'min_length' | 'max_length' | 'pattern' | 'enum' | 'minimum' | 'maximum' | 'unknown';
  message: string;
}

/** Spec, Limits: string parameters are capped at 50,000 characters unless the schema says otherwise. */
export const DEFAULT_MAX_STRING = 50_000;

/**
 * Where the values came from. JSON has types of its own, so a number or boolean given for a
 * textual parameter is a wrong type; a multipart form sends every value as text, so there the
 * text of a number or a boolean is what the number and boolean types read.
 */
export type ParamsSource = 'json' | 'form';

type Check = (value: unknown, source: ParamsSource) => ParamIssue[];

// Deliberately simple: one @, no spaces or angle brackets, a dotted domain. Full RFC 5322
// allows far more, but nothing a web form or a relay should accept.
const EMAIL =
  /^[^\s@<>(),;:"[\]\\]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;
const DATE = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;

/**
 * An IDN domain (`zoë@exämple.com`) is checked in its A-label form, the one relays are given
 * (src/domain/addresses.ts); a UTF-8 local part was always accepted and needs SMTPUTF8.
 */
export function isEmailAddress(value: string): boolean {
  return value.length <= 254 && EMAIL.test(asciiDomainAddress(value));
}

/** ISO 8601 date or date-time whose calendar day exists (2026-02-30 does not). */
function isDate(value: string): boolean {
  if (!DATE.test(value) || Number.isNaN(Date.parse(value))) return false;
  const [y, m, d] = value.slice(0, 10).split('-').map(Number) as [number, number, number];
  const day = new Date(Date.UTC(y, m - 1, d));
  return day.getUTCFullYear() === y && day.getUTCMonth() === m - 1 && day.getUTCDate() === d;
}

function isUrl(value: string): boolean {
  try {
    const u = new URL(value);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== '';
  } catch {
    return false;
  }
}

/**
 * Forms send every value as text, so numbers and booleans are also accepted in their text form;
 * so are JSON strings like "42", as before (many JSON clients copy form inputs as they are).
 * A number never counts as text, though: see the textual branch of compileParam.
 */
function asNumber(value: unknown): number | undefined {
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (typeof value === 'string' && /^-?\d+(\.\d+)?([eE][+-]?\d+)?$/.test(value.trim())) return Number(value);
  return undefined;
}

const TRUE_WORDS = new Set(['true', 'on', '1', 'yes']);
const FALSE_WORDS = new Set(['false', 'off', '0', 'no']);

function compileParam(spec: ParamSpec): Check {
  const name = spec.name;
  const issue = (code: ParamIssue['code'], message: string): ParamIssue => ({ param: name, code, message });
  const pattern = spec.pattern === undefined ? undefined : new RegExp(spec.pattern, 'u');
  const maxLength = spec.max_length ?? DEFAULT_MAX_STRING;
  const textual =
    spec.type === 'string' || spec.type === 'html' || spec.type === 'email' || spec.type === 'url' || spec.type === 'date';

  return (value, source) => {
    if (value === undefined || value === null || value === '') {
      return spec.required === true ? [issue('required', `${name} is required`)] : [];
    }
    if (textual) {
      // Text only: a JSON number or boolean is not a string (the spec's "wrong type"), and
      // objects and arrays never are. Only a form's values, text by nature, are read as text.
      const scalar = typeof value === 'number' || typeof value === 'boolean';
      if (typeof value !== 'string' && !(scalar && source === 'form')) {
        const given = Array.isArray(value) ? 'an array' : typeof value === 'object' ? 'an object' : `a JSON ${typeof value}`;
        return [
          issue(
            'type',
            `${name} must ` +
              `be ${spec.type === 'string' || spec.type === 'html' ? 'a string' : `a ${spec.type} string`}, not ${given}`,
          ),
        ];
      }
      const text = String(value);
      const out: ParamIssue[] = [];
      if (spec.type === 'email' && !isEmailAddress(text.trim())) out.push(issue('format', `${name} must be an e-mail address`));
      if (spec.type === 'url' && !isUrl(text.trim())) out.push(issue('format', `${name} must be an http(s) URL`));
      if (spec.type === 'date' && !isDate(text.trim())) {
        out.push(issue('format', `${name} must be an ISO 8601 date (YYYY-MM-DD or a date-time)`));
      }
      const length = [...text].length;
      if (spec.min_length !== undefined && length < spec.min_length)
        out.push(issue('min_length', `${name} must be at least ${spec.min_length} characters`));
      if (length > maxLength) out.push(issue('max_length', `${name} must be at most ${maxLength} characters`));
      if (pattern !== undefined && !pattern.test(text)) out.push(issue('pattern', `${name} does not match the required pattern`));
      if (spec.enum !== undefined && !spec.enum.includes(text))
        out.push(issue('enum', `${name} must be one of: ${spec.enum.join(', ')}`));
      // The spec asks for one issue per failing parameter: the first rule it breaks.
      return out.slice(0, 1);
    }
    if (spec.type === 'boolean') {
      if (typeof value === 'boolean') return [];
      if (typeof value === 'string' && (TRUE_WORDS.has(value.toLowerCase()) || FALSE_WORDS.has(value.toLowerCase()))) return [];
      return [issue('type', `${name} must be a boolean`)];
    }
    const n = asNumber(value);
    if (n === undefined || (spec.type === 'integer' && !Number.isInteger(n)))
      return [issue('type', `${name} must be ${spec.type === 'integer' ? 'an integer' : 'a number'}`)];
    const out: ParamIssue[] = [];
    if (spec.minimum !== undefined && n < spec.minimum) out.push(issue('minimum', `${name} must be at least ${spec.minimum}`));
    if (spec.maximum !== undefined && n > spec.maximum) out.push(issue('maximum', `${name} must be at most ${spec.maximum}`));
    if (spec.enum !== undefined && !spec.enum.includes(n))
      out.push(issue('enum', `${name} must be one of: ${spec.enum.join(', ')}`));
    return out.slice(0, 1);
  };
}

export type ParamsValidator = (params: Record<string, unknown>, source: ParamsSource) => ParamIssue[];

/**
 * Whether an undeclared parameter holds a string over the default limit, at any depth: a list
 * or object for `{{#each}}` can carry text too. A loop, not recursion (bodies are at most 64
 * levels deep, src/http/json-body.ts, but this must not depend on it).
 */
function hasLongString(value: unknown): boolean {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === 'string') {
      if (v.length > DEFAULT_MAX_STRING) return true;
    } else if (typeof v === 'object' && v !== null) {
      for (const child of Object.values(v)) stack.push(child);
    }
  }
  return false;
}

/** Builds the validator of one template version: one closure per declared parameter. */
export function compileParamsValidator(params: readonly ParamSpec[], strict: boolean): ParamsValidator {
  const checks = new Map(params.map((p) => [p.name, compileParam(p)]));
  return (values, source) => {
    const issues: ParamIssue[] = [];
    for (const [name, check] of checks) issues.push(...check(values[name], source));
    for (const [name, value] of Object.entries(values)) {
      if (checks.has(name)) continue;
      if (strict) issues.push({ param: name, code: 'unknown', message: `${name} is not a parameter of this template` });
      else if (hasLongString(value)) {
        issues.push({
          param: name,
          code: 'max_length',
          message: `${name} must be at most ${DEFAULT_MAX_STRING} characters, and so must every string inside it`,
        });
      }
    }
    return issues;
  };
}

/**
 * Compiled once per template version (the cache key carries it) and reused. The version alone
 * is not enough: a template deleted and created again under its id starts at version 1 again,
 * and would have been served by the old one's validator, renderer and recipient-lock analysis.
 * Every write also sets `updated_at`, so the pair repeats only if a template is created,
 * deleted and created again within one millisecond.
 */
export function templateKey(template: Pick<Template, 'org_id' | 'id' | 'version' | 'updated_at'>): string {
  return `${template.org_id}\u0000${template.id}\u0000${template.version}\u0000${template.updated_at}`;
}
