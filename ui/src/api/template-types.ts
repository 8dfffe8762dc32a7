/**
 * The template resource's shapes (admin API, src/admin/routes/templates.ts and the render,
 * send-test and versions routes). No imports: the pure logic in ui/src/lib uses these and is
 * typechecked and unit-tested by the server's TypeScript setup too.
 */
export const PARAM_TYPES = ['string', 'html', 'email', 'url', 'integer', 'number', 'boolean', 'date'] as const;
export type ParamType = (typeof PARAM_TYPES)[number];

/** One declared parameter (src/domain/types.ts ParamSpec). */
export interface ParamSpec {
  name: string;
  type: ParamType;
  required?: boolean;
  min_length?: number;
  max_length?: number;
  pattern?: string;
  enum?: Array<string | number>;
  minimum?: number;
  maximum?: number;
  description?: string;
}

export const CONTENT_FIELDS = ['subject', 'to', 'cc', 'bcc', 'from_name', 'from_email', 'reply_to', 'html', 'text'] as const;
export type ContentField = (typeof CONTENT_FIELDS)[number];

export const FLAG_FIELDS = ['captcha', 'allow_dynamic_recipients', 'allow_attachments', 'strict_params', 'enforce_link_allowlist', 'frozen'] as const;
export type FlagField = (typeof FLAG_FIELDS)[number];

/** GET /organizations/{org}/templates/{id}. */
export interface TemplateResource extends Record<FlagField, boolean> {
  id: string;
  name: string;
  service_id: string | null;
  params: ParamSpec[];
  content: Record<ContentField, string>;
  version: number;
  created_at: string;
  updated_at: string;
}

/** What PUT and PATCH take (content flat), and what the render route takes as `template`. */
export type TemplateWrite = Partial<Record<ContentField, string>> & Partial<Record<FlagField, boolean>> & {
  name?: string;
  service_id?: string | null;
  params?: ParamSpec[];
};

/** A rendered email as the API shows it (src/templates/rendered-view.ts): a preview, or a message's content. */
export interface RenderedEmailView {
  subject: string;
  html: string | null;
  text: string | null;
  from: string;
  reply_to: string[];
  to: string[];
  cc: string[];
  bcc: string[];
}

/** POST …/render → 200; `warnings` (admin render only) e.g. a frozen template that sends would refuse. */
export interface RenderResult extends RenderedEmailView {
  service_id: string;
  template_version: number | null;
  warnings?: Array<{ code: string; message: string }>;
}

export interface TemplateVersion {
  version: number;
  created_at: string;
  current: boolean;
  template: TemplateResource;
}

export interface SendTestResult {
  message_id: string;
  status: string;
}

/** The services a template may name (only what the editor's select needs). */
export interface ServiceSummary {
  id: string;
  provider: string;
  default?: boolean;
}
