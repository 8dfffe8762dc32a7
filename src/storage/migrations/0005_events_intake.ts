import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

/**
 * Provider event intake (issue 12):
 * - `services.events_token`: the unguessable part of the service's events URL
 *   (`/v1/provider-events/<token>`). It is kept as it is, not as a digest, because the admin API
 *   shows the URL on every read: it is a capability URL, like a webhook URL, shown to admins
 *   only and rotatable. A unique index finds the service from it. Existing services get one.
 * - `webhook_tokens`: signature tokens a source declares single-use (Mailgun), kept past their
 *   validity window so a replay is refused in any process and after a restart.
 */
export async function up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
  await db.schema.alterTable('services').addColumn('events_token', 'text').execute();
  await db.schema.createIndex('services_events_token').unique().on('services').column('events_token').execute();
  const services = db as Kysely<{ services: { org_id: string; id: string; events_token: string | null } }>;
  const rows = await services.selectFrom('services').select(['org_id', 'id']).execute();
  for (const row of rows) {
    await services
      .updateTable('services')
      .set({ events_token: randomBytes(24).toString('base64url') })
      .where('org_id', '=', row.org_id)
      .where('id', '=', row.id)
      .execute();
  }
  await db.schema
    .createTable('webhook_tokens')
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('token', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('webhook_tokens_pk', ['source', 'token'])
    .execute();
  await db.schema.createIndex('webhook_tokens_expires').on('webhook_tokens').column('expires_at').execute();
}
