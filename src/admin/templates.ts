import { templateFields } from '../config/normalize.js';
import type { TemplateInput } from '../config/resources.js';
import type { Template } from '../domain/types.js';
import type { Store } from '../storage/store.js';
import { templateProblems } from '../templates/check.js';
import { CONTENT_FIELDS, TEMPLATE_REQUIRED, type TemplatePut } from './routes/bodies.js';
import { fieldPath, invalidFields } from './routes/common.js';
import type { FieldProblem } from './put-patch.js';

type TemplateBody = Omit<TemplatePut, 'id' | 'version' | 'created_at' | 'updated_at'>;

/**
 * A template PUT body (content flat, as the config file writes it, or under `content`, as GET
 * shows it) → the config file's input, once every required field is there. The same field in
 * both places with two values is refused: there is no telling which one was meant.
 */
export function completeTemplateInput(body: TemplateBody): TemplateInput {
  const { content, ...input } = body;
  const problems: FieldProblem[] = [];
  for (const field of CONTENT_FIELDS) {
    const nested = content?.[field];
    if (nested === undefined) continue;
    if (input[field] !== undefined && input[field] !== nested) {
      problems.push({ field: `content.${field}`, message: `differs from the top-level ${field}; give it once` });
    }
    input[field] = nested;
  }
  for (const field of TEMPLATE_REQUIRED) if (input[field] === undefined) problems.push({ field, message: 'is required' });
  if (input.html === undefined && input.text === undefined) problems.push({ field: 'html', message: 'is required (or text)' });
  if (problems.length > 0) throw invalidFields(problems);
  return input;
}

/** The template as a PATCH starts from: GET's body without its read-only fields. */
export function templatePatchBase(t: Template): Record<string, unknown> {
  const { org_id: _o, id: _i, version: _v, created_at: _c, updated_at: _u, ...rest } = t;
  const content: Record<string, string> = {};
  const base: Record<string, unknown> = { ...rest, content };
  for (const field of CONTENT_FIELDS) {
    content[field] = t[field];
    delete base[field];
  }
  return base;
}

/** A PATCH names content flat or under `content`; both are moved under `content` to merge. */
export function nestContent(patch: TemplateBody): Record<string, unknown> {
  const { content, ...rest } = patch;
  const out: Record<string, unknown> = { ...rest };
  const nested: Record<string, string> = {};
  const problems: FieldProblem[] = [];
  for (const field of CONTENT_FIELDS) {
    const flat = rest[field];
    const inner = content?.[field];
    if (flat !== undefined && inner !== undefined && flat !== inner) {
      problems.push({ field: `content.${field}`, message: `differs from the top-level ${field}; give it once` });
    }
    const value = inner ?? flat;
    if (value !== undefined) nested[field] = value;
    delete out[field];
  }
  if (problems.length > 0) throw invalidFields(problems);
  if (Object.keys(nested).length > 0) out.content = nested;
  return out;
}

/**
 * Creates or replaces a template from a complete input: content must be valid Handlebars, the
 * parameter schema satisfiable and `service_id` a service of the organization.
 */
export async function putTemplate(store: Store, orgId: string, id: string, input: TemplateInput): Promise<{ created: boolean; template: Template | undefined }> {
  const fields = templateFields(id, input);
  const problems = templateProblems(fields, fields.params).map((p) => ({ field: fieldPath(p.path), message: p.message }));
  if (problems.length > 0) throw invalidFields(problems);
  const now = store.clock.now();
  return store.transaction(async (tx) => {
    if (fields.service_id !== null && (await tx.services.get(orgId, fields.service_id)) === undefined) {
      throw invalidFields([{ field: 'service_id', message: `"${fields.service_id}" names no service of organization "${orgId}"` }]);
    }
    const result = await tx.templates.put(orgId, id, fields, now);
    return { created: result === 'created', template: await tx.templates.get(orgId, id) };
  });
}
