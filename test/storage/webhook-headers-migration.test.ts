import { type Kysely, sql } from 'kysely';
import { afterAll, expect, it } from 'vitest';
import { migrate } from '../../src/storage/dialect.js';
import type { Database } from '../../src/storage/schema.js';
import { webhookDeliveriesRepo } from '../../src/storage/webhook-deliveries.js';
import { webhookEndpointsRepo } from '../../src/storage/webhook-endpoints.js';
import { describeDialects } from '../support/dialects.js';
import { databaseBefore } from '../support/migrations.js';
import { freshDatabase, type TestDatabase } from '../support/stores.js';

/**
 * Migration 0023 (issue 29) over a deployment with an endpoint, a delivery and its attempt: the
 * endpoint reads with no custom headers, the attempt with no logged request headers, and the
 * delivery's body is shown as stored.
 */
describeDialects('migration 0023_webhook_headers on %s', (dialect, skip) => {
  const dbs: TestDatabase[] = [];
  afterAll(async () => {
    for (const d of dbs) await d.drop();
  });

  it.skipIf(skip)('existing endpoints read with no headers, existing attempts with none logged', async () => {
    const database = await freshDatabase(dialect);
    dbs.push(database);
    const opened = await databaseBefore(database, '0023');
    const { db } = opened;
    try {
      await sql`insert into webhook_endpoints (org_id, id, url, description, events, enabled, disabled_reason, secret,
        previous_secret, previous_secret_expires_at, failing_since, created_at, updated_at)
        values ('acme', 'crm', 'https://crm.example/hook', null, '*', 1, null, 'whsec_x', null, null, null, 0, 0)`.execute(db);
      await sql`insert into webhook_deliveries (id, org_id, endpoint_id, event_id, message_id, event_type, message_status,
        sequence, payload, state, attempts, next_attempt_at, lease_until, last_status, last_error, created_at, updated_at)
        values (7, 'acme', 'crm', null, null, 'webhook.test', null, null, '{"type":"webhook.test"}', 'succeeded', 1, null,
        null, 200, null, 0, 0)`.execute(db);
      await sql`insert into webhook_attempts (delivery_id, attempt, at, status, duration_ms, response_body, error)
        values (7, 1, 0, 200, 12, 'ok', null)`.execute(db);

      expect(await migrate(opened)).toContain('0023_webhook_headers');

      const typed = db as unknown as Kysely<Database>;
      expect((await webhookEndpointsRepo(typed).get('acme', 'crm'))?.headers).toEqual([]);
      const delivery = await webhookDeliveriesRepo(typed, opened.dialect).get('acme', 'whd_7');
      expect(delivery?.request_body).toBe('{"type":"webhook.test"}');
      expect(delivery?.log).toEqual([
        { attempt: 1, at: 0, status: 200, duration_ms: 12, response_body: 'ok', error: null, request_headers: null },
      ]);
    } finally {
      await opened.file?.close();
      await db.destroy();
    }
  });
});
