import type { Kysely, Selectable } from 'kysely';
import { type CustomHeader, headersColumn, headersFromColumn } from '../webhooks/custom-headers.js';
import { isWebhookEventType, type WebhookEndpoint, type WebhookEventFilter } from '../webhooks/types.js';
import { bool, int } from './json.js';
import type { Database, WebhookEndpointsTable } from './schema.js';

/** What an operator sets on an endpoint (the rest is the secret, the state and the times). */
export interface WebhookEndpointFields {
  url: string;
  description: string | null;
  events: WebhookEventFilter;
  enabled: boolean;
  /** Custom request headers, real values (checked by customHeaderProblems, masks resolved). */
  headers: readonly CustomHeader[];
}

/**
 * `*` ↔ every event; a list ↔ `,a,b,` (comma-wrapped so the outbox's fan-out finds subscribers
 * with one LIKE '%,message.sent,%', src/storage/webhook-outbox.ts). A stored type this version
 * does not know is dropped from the view: it can only have come from a newer version.
 */
export function eventsColumn(events: WebhookEventFilter): string {
  return events === '*' ? '*' : `,${events.join(',')},`;
}

export function eventsFromColumn(column: string): WebhookEventFilter {
  if (column === '*') return '*';
  return column.split(',').filter(isWebhookEventType);
}

function toEndpoint(row: Selectable<WebhookEndpointsTable>): WebhookEndpoint {
  return {
    org_id: row.org_id,
    id: row.id,
    url: row.url,
    description: row.description,
    events: eventsFromColumn(row.events),
    enabled: bool(row.enabled),
    disabled_reason: row.disabled_reason,
    secret: row.secret,
    previous_secret: row.previous_secret,
    previous_secret_expires_at: row.previous_secret_expires_at,
    failing_since: row.failing_since,
    headers: headersFromColumn(row.headers),
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

/** The organization's outbound webhook endpoints (issue 13). Delivery state lives in webhookDeliveries. */
export function webhookEndpointsRepo(db: Kysely<Database>) {
  return {
    async list(orgId: string): Promise<WebhookEndpoint[]> {
      const rows = await db.selectFrom('webhook_endpoints').selectAll().where('org_id', '=', orgId).orderBy('id').execute();
      return rows.map(toEndpoint);
    },

    async get(orgId: string, id: string): Promise<WebhookEndpoint | undefined> {
      const row = await db
        .selectFrom('webhook_endpoints')
        .selectAll()
        .where('org_id', '=', orgId)
        .where('id', '=', id)
        .executeTakeFirst();
      return row === undefined ? undefined : toEndpoint(row);
    },

    /** A new endpoint; the caller has checked that the id is free (in the same transaction). */
    async insert(orgId: string, id: string, fields: WebhookEndpointFields, secret: string, now: number): Promise<void> {
      await db
        .insertInto('webhook_endpoints')
        .values({
          org_id: orgId,
          id,
          url: fields.url,
          description: fields.description,
          events: eventsColumn(fields.events),
          enabled: int(fields.enabled),
          disabled_reason: null,
          secret,
          previous_secret: null,
          previous_secret_expires_at: null,
          failing_since: null,
          headers: headersColumn(fields.headers),
          created_at: now,
          updated_at: now,
        })
        .execute();
    },

    /**
     * URL, description, events and headers. `enabled` is not written here: setEnabled records why, and
     * clears the failure clock when an endpoint comes back. False when it does not exist.
     */
    async update(orgId: string, id: string, fields: Omit<WebhookEndpointFields, 'enabled'>, now: number): Promise<boolean> {
      const r = await db
        .updateTable('webhook_endpoints')
        .set({
          url: fields.url,
          description: fields.description,
          events: eventsColumn(fields.events),
          headers: headersColumn(fields.headers),
          updated_at: now,
        })
        .where('org_id', '=', orgId)
        .where('id', '=', id)
        .executeTakeFirst();
      return r.numUpdatedRows > 0n;
    },

    async delete(orgId: string, id: string): Promise<boolean> {
      const r = await db.deleteFrom('webhook_endpoints').where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst();
      return r.numDeletedRows > 0n;
    },

    /**
     * The new secret signs from now on; the current one keeps signing beside it until
     * `previousExpiresAt` (a time not after `now` ends it at once). The SET's right-hand sides
     * read the row as it was, so `previous_secret = secret` takes the old value on both dialects.
     */
    async rotateSecret(orgId: string, id: string, newSecret: string, previousExpiresAt: number, now: number): Promise<boolean> {
      const keepsOld = previousExpiresAt > now;
      const r = await db
        .updateTable('webhook_endpoints')
        .set((eb) => ({
          previous_secret: keepsOld ? eb.ref('secret') : null,
          previous_secret_expires_at: keepsOld ? previousExpiresAt : null,
          secret: newSecret,
          updated_at: now,
        }))
        .where('org_id', '=', orgId)
        .where('id', '=', id)
        .executeTakeFirst();
      return r.numUpdatedRows > 0n;
    },

    /**
     * Enabling clears the reason and the failure clock (the endpoint starts a fresh 5-day
     * window); disabling records the reason (410 Gone, failing for days, an operator).
     */
    async setEnabled(orgId: string, id: string, enabled: boolean, reason: string | null, now: number): Promise<boolean> {
      const r = await db
        .updateTable('webhook_endpoints')
        .set(
          enabled
            ? { enabled: 1, disabled_reason: null, failing_since: null, updated_at: now }
            : { enabled: 0, disabled_reason: reason, updated_at: now },
        )
        .where('org_id', '=', orgId)
        .where('id', '=', id)
        .executeTakeFirst();
      return r.numUpdatedRows > 0n;
    },
  };
}

export type WebhookEndpointsRepo = ReturnType<typeof webhookEndpointsRepo>;
