import type { Generated } from 'kysely';
import type { AlertEventsTable, AlertSettingsTable, AlertStatesTable } from './schema-alerts.js';
import type { RequestLogTable } from './schema-request-log.js';
import type { SimulatorEventsTable, TestInboxTable } from './schema-test-mode.js';
import type { WebhookAttemptsTable, WebhookDeliveriesTable, WebhookEndpointsTable } from './schema-webhooks.js';

export type { RequestLogTable } from './schema-request-log.js';
export type { SimulatorEventsTable, TestInboxTable } from './schema-test-mode.js';
export type { WebhookAttemptsTable, WebhookDeliveriesTable, WebhookEndpointsTable } from './schema-webhooks.js';

/**
 * Table shapes as both dialects store them. Times are integer milliseconds since the epoch
 * (BIGINT on PostgreSQL, read back as numbers), booleans are 0/1 and structured settings are
 * JSON text, so one query layer serves SQLite and PostgreSQL without per-dialect mapping.
 */
/** One row (id 1): bumped by triggers on every catalog change (migration 0010). */
export interface CatalogStampTable {
  id: number;
  stamp: number;
}

export interface OrganizationsTable {
  id: string;
  name: string;
  plan: string;
  credits: number;
  /** metered | unlimited (migration 0021). */
  credit_mode: string;
  overdraft: number;
  when_out_of_credits: string;
  hold_queue_limit: number;
  email_verified: number;
  suspended: number;
  security: string;
  captcha_site_key: string | null;
  captcha_secret_key: string | null;
  created_at: number;
  updated_at: number;
}

export interface ApiKeysTable {
  id: string;
  org_id: string;
  type: string;
  key_hash: string;
  public_key: string | null;
  hint: string;
  status: string;
  created_at: number;
  revoked_at: number | null;
  /** When a rotated or revoked key stops authenticating (end of a rotation's grace); null while active. */
  expires_at: number | null;
  /** live | test (migration 0015). */
  mode: Generated<string>;
  /** Migration 0019: a label, full | send_only, the last use (at most once a minute), admin | config | cli | bootstrap. */
  name: string | null;
  scope: Generated<string>;
  last_used_at: number | null;
  created_by: string | null;
}

export interface ServicesTable {
  org_id: string;
  id: string;
  provider: string;
  settings: string;
  is_default: number;
  max_per_second: number | null;
  version: number;
  created_at: number;
  updated_at: number;
  /** The secret part of the service's provider events URL (migration 0005). */
  events_token: string | null;
}

/** Single-use webhook signature tokens (migration 0005). */
export interface WebhookTokensTable {
  source: string;
  token: string;
  expires_at: number;
}

export interface TemplatesTable {
  org_id: string;
  id: string;
  name: string;
  service_id: string | null;
  subject: string;
  to_addr: string;
  cc: string;
  bcc: string;
  from_name: string;
  from_email: string;
  reply_to: string;
  html: string;
  text: string;
  params: string;
  /** JSON object or null (migration 0017). */
  sample_params: string | null;
  captcha: number;
  allow_dynamic_recipients: number;
  allow_attachments: number;
  strict_params: number;
  enforce_link_allowlist: number;
  frozen: number;
  version: number;
  created_at: number;
  updated_at: number;
}

export interface SuppressionsTable {
  org_id: string;
  email: string;
  reason: string;
  created_at: number;
  /** The message whose hard bounce or complaint put the address here (migration 0004). */
  message_id: string | null;
}

export interface BlockListTable {
  org_id: string;
  value: string;
  created_at: number;
}

export interface MessagesTable {
  id: string;
  org_id: string;
  template_id: string;
  service_id: string;
  status: string;
  status_token_hash: string;
  key_type: string;
  subject: string | null;
  /** RFC 5322 Message-ID, stable across retries so a duplicate delivery can be recognised. */
  header_message_id: string;
  /** 1 when this message took a credit (held messages take theirs on release). */
  credit_taken: number;
  attempts: number;
  next_attempt_at: number | null;
  lease_until: number | null;
  last_error: string | null;
  idempotency_key: string | null;
  created_at: number;
  updated_at: number;
  sent_at: number | null;
  /** The provider's id for the message, as the transport reported it at hand-off (migration 0004). */
  provider_message_id: string | null;
  /** live | test: the mode of the key that sent it (migration 0015). */
  mode: Generated<string>;
  /** 1 when some recipient is a simulator address (src/testmode/simulator.ts): never delivered, never charged. */
  simulated: Generated<number>;
}

export interface MessageContentsTable {
  message_id: string;
  /** The rendered email as JSON (subject, from, reply-to, recipients, html, text). */
  content: string;
  /** Attachment references (blob keys), JSON; null without attachments. */
  attachments: string | null;
  /** A submitted message's bytes (SMTP submission, migration 0016); null for every other message. */
  mime: Buffer | null;
}

export interface MessageRecipientsTable {
  message_id: string;
  org_id: string;
  kind: string;
  email: string;
  created_at: number;
  /**
   * pending (as the message) | sent | deferred | bounced | failed | suppressed: written only
   * once a message's recipients part ways (a relay refused some of them); see migration 0002.
   */
  state: Generated<string>;
  reason: string | null;
  updated_at: number | null;
}

export interface MessageEventsTable {
  id: Generated<number>;
  message_id: string;
  type: string;
  at: number;
  detail: string | null;
}

/** Every verified provider event, once per (source, scope, event_key) (migration 0004). */
export interface ProviderEventsTable {
  source: string;
  /** The dedupe scope: `service:<id>` for webhook events, `message:<id>` for DSN/ARF (record.ts). */
  scope: string;
  event_key: string;
  service_id: string | null;
  org_id: string | null;
  message_id: string | null;
  type: string;
  recipient: string | null;
  at: number;
  /** The normalized event as JSON (ProviderEvent). */
  detail: string;
  received_at: number;
  /** The provider's message id the event names (match.providerMessageId): how a settle finds an early event (migration 0013). */
  provider_message_id: string | null;
}

export interface IdempotencyTable {
  org_id: string;
  key: string;
  request_hash: string;
  state: string;
  response_status: number | null;
  response_headers: string | null;
  response_body: string | null;
  created_at: number;
  expires_at: number;
}

export interface UploadsTable {
  id: string;
  org_id: string;
  filename: string;
  content_type: string | null;
  size: number;
  blob_key: string;
  key_type: string;
  status: string;
  created_at: number;
  url_expires_at: number;
  expires_at: number;
  uploaded_at: number | null;
}

/** A signed-in UI browser (migration 0007): the SHA-256 of its cookie's id, never the id. */
export interface AdminSessionsTable {
  id_hash: string;
  csrf_token: string;
  created_at: number;
  expires_at: number;
}

/** One version of a template's content: `fields` is its TemplateFields as JSON. */
export interface TemplateVersionsTable {
  org_id: string;
  template_id: string;
  version: number;
  fields: string;
  created_at: number;
}

export interface Database {
  organizations: OrganizationsTable;
  catalog_stamp: CatalogStampTable;
  api_keys: ApiKeysTable;
  services: ServicesTable;
  webhook_tokens: WebhookTokensTable;
  templates: TemplatesTable;
  suppressions: SuppressionsTable;
  block_list: BlockListTable;
  messages: MessagesTable;
  message_contents: MessageContentsTable;
  message_recipients: MessageRecipientsTable;
  message_events: MessageEventsTable;
  provider_events: ProviderEventsTable;
  idempotency_records: IdempotencyTable;
  uploads: UploadsTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
  admin_sessions: AdminSessionsTable;
  template_versions: TemplateVersionsTable;
  test_inbox: TestInboxTable;
  simulator_events: SimulatorEventsTable;
  request_log: RequestLogTable;
  alert_settings: AlertSettingsTable;
  alert_states: AlertStatesTable;
  alert_events: AlertEventsTable;
}
