import type { TObject, TSchema } from '@sinclair/typebox';

/**
 * What mailroom knows about one provider, as data (issue 26 §1): the schemas of its settings
 * block and of its `events` block, which fields are secret and which decide where a secret
 * goes, the defaults, the masked view GET shows, the header that makes it echo our message id,
 * and the form's labels. Pure (TypeBox only, no transport): the resource model (src/resources/),
 * the admin API, the delivery worker, the events intake and the operator UI all derive their
 * lists and schemas from the registry of these (src/providers/index.ts).
 */

/** A problem with one field, named as the admin API's `details.fields` name it (`ses.access_key_id`). */
export interface FieldProblem {
  field: string;
  message: string;
}

/** How the operator UI shows a field: its label, a hint under it, the labels of a select's options. */
export interface FieldLabel {
  label: string;
  hint?: string;
  options?: Readonly<Record<string, string>>;
}

/** The service's settings block named after the provider (`postmark: { server_token, … }`). */
export interface SettingsBlock {
  /** What the config file, a PUT and (each field optional) a PATCH take. */
  schema: TObject;
  /** What GET shows: secrets as the mask, optional fields left out when not stored. */
  view: TObject;
  /** Write-only fields (dotted paths in the block): read as the mask, kept when the mask comes back. */
  secrets: readonly string[];
  /**
   * Fields that decide where the secrets go (or what they are the secret of): a write that keeps
   * a stored secret by sending its mask back must leave these as stored, or an admin who cannot
   * read the secret could point it at a server of theirs (endpoint → http://attacker, then
   * POST …/test) and read it there.
   */
  destination: readonly string[];
  /** Written into the stored block when left out, and shown by GET when a stored block lacks them. */
  defaults: Readonly<Record<string, string | number | boolean | null>>;
  /** What the schema cannot say about a given block (SES: both keys or neither); fields relative to the block. */
  problems?: (block: Readonly<Record<string, unknown>>) => FieldProblem[];
  /** The form's label of every field (dotted paths in the block). */
  labels: Readonly<Record<string, FieldLabel>>;
}

/** The service's `events` block when `events.source` names this provider (issue 12). */
export interface EventsBlock {
  /** The settings its webhook source reads; each is optional in the schema, `required` says which it needs. */
  fields: Readonly<Record<string, TSchema>>;
  /** What GET shows of them (secrets as the mask). */
  view: Readonly<Record<string, TSchema>>;
  required: readonly string[];
  secrets: readonly string[];
  labels: Readonly<Record<string, FieldLabel>>;
  /**
   * Headers that make the provider echo our message id in the events it posts back, added only
   * when `events.source` names it (through any other relay they would reach the recipient).
   * Left out when the provider reads none.
   */
  trackingHeaders?: (messageId: string) => Record<string, string>;
}

export interface ProviderDescriptor {
  /** The name services give as `provider` and `events.source`, and the name of its files. */
  name: string;
  /** For prose (OpenAPI descriptions): "SES", "Mailgun". */
  title: string;
  /**
   * `http`: an HTTP API, whose block is stored as given plus its defaults and whose secrets the
   * generic code masks and keeps (a new provider is one of these); `smtp`: the SMTP relay, whose
   * block src/resources/normalize.ts stores whole and the admin routes mask with DKIM's rules;
   * `local`: no settings (the outbox).
   */
  kind: 'http' | 'smtp' | 'local';
  settings?: SettingsBlock;
  events?: EventsBlock;
}
