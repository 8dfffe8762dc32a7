/**
 * The template resource's shapes (admin API, src/admin/routes/templates.ts and the render,
 * send-test and versions routes), generated (./shapes.ts). No DOM: the pure logic in ui/src/lib
 * uses these and is typechecked and unit-tested by the server's TypeScript setup too.
 */
import { allOf, type Answer, type Item, type RequestBody, type Schema } from './shapes.js';

type Template = '/organizations/{org}/templates/{id}';

/** GET /organizations/{org}/templates/{id}. */
export type TemplateResource = Schema<'Template'>;

/** One declared parameter (src/domain/types.ts ParamSpec). */
export type ParamSpec = TemplateResource['params'][number];
export type ParamType = ParamSpec['type'];
export const PARAM_TYPES = allOf<ParamType>()(['string', 'html', 'email', 'url', 'integer', 'number', 'boolean', 'date']);

export type ContentField = keyof TemplateResource['content'];
export const CONTENT_FIELDS = allOf<ContentField>()([
  'subject',
  'to',
  'cc',
  'bcc',
  'from_name',
  'from_email',
  'reply_to',
  'html',
  'text',
]);

export type FlagField = {
  [K in keyof TemplateResource]: TemplateResource[K] extends boolean ? K : never;
}[keyof TemplateResource];
export const FLAG_FIELDS = allOf<FlagField>()([
  'captcha',
  'allow_dynamic_recipients',
  'allow_attachments',
  'strict_params',
  'enforce_link_allowlist',
  'frozen',
]);

/** A write's answer (PUT, PATCH, restore): the template and its `warnings` (a sample the schema refuses, stored all the same). */
export type TemplateWritten = Answer<Template, 'patch'>;

/** What PATCH takes (content flat; PUT takes the same), and what the render route takes as `template`. */
export type TemplateWrite = RequestBody<Template, 'patch'>;

/** POST …/render → 200; `warnings` (admin render only) e.g. a frozen template that sends would refuse. */
export type RenderResult = Answer<'/organizations/{org}/templates/{id}/render', 'post'>;

export type TemplateVersion = Item<'/organizations/{org}/templates/{id}/versions'>;

export type SendTestResult = Answer<'/organizations/{org}/templates/{id}/send-test', 'post'>;

/** The services a template may name (only what the editor's select needs). */
export type ServiceSummary = Pick<Item<'/organizations/{org}/services'>, 'id' | 'provider' | 'default'>;
