import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { insertQueued } from '../support/delivery.js';
import { Closer } from '../support/cleanup.js';
import { databaseOf, messageRow } from '../support/db.js';
import { seedOrg } from '../support/seed.js';
import { DIALECTS, freshStore, postgresAvailable, type TestStore } from '../support/stores.js';

/**
 * The queue's claim and mark-sent, one statement each on PostgreSQL (src/storage/queue.ts
 * claimPostgres, markSentPostgres) and several on SQLite: the same rows, events and webhook
 * deliveries on both.
 */
const pgUp = await postgresAvailable();

for (const dialect of DIALECTS) {
  describe(`queue claim and markSentMany (${dialect})`, () => {
    let closer: Closer;
    let t: TestStore;
    beforeEach(async (ctx) => {
      if (dialect === 'postgres' && !pgUp) ctx.skip();
      closer = new Closer();
      t = await freshStore(dialect);
      closer.defer(() => t.cleanup());
      await seedOrg(t.store, { credits: 100 });
    });
    afterEach(async () => {
      await closer?.closeAll();
    });

    const events = async (id: string) =>
      (
        await databaseOf(t.store)
          .selectFrom('message_events')
          .select(['type', 'detail'])
          .where('message_id', '=', id)
          .orderBy('id')
          .execute()
      ).map((e) => `${e.type} ${e.detail ?? ''}`.trim());
    const deliveries = async () =>
      (
        await databaseOf(t.store)
          .selectFrom('webhook_deliveries')
          .select(['message_id', 'event_type', 'message_status', 'sequence'])
          .orderBy('id')
          .execute()
      ).map((d) => `${d.message_id} ${d.event_type} ${d.message_status ?? ''} ${String(d.sequence)}`);

    it('claims with its content and a sending event; marks sent only under the lease it holds', async () => {
      const now = t.clock.now();
      const [a, b] = await insertQueued(t.store, 2, now);
      const claimed = await t.store.transaction((tx) => tx.queue.claim(now, 10, 60_000), { durable: false });
      expect(claimed.map((m) => m.id).sort()).toEqual([a, b].sort());
      for (const m of claimed) {
        expect(m).toMatchObject({
          org_id: 'acme',
          service_id: 'smtp',
          attempts: 1,
          credit_taken: true,
          lease_until: now + 60_000,
          created_at: now,
        });
        expect(JSON.parse(m.content)).toMatchObject({ subject: expect.stringMatching(/^Bulk message/) });
        expect(m.attachments).toBeNull();
      }
      expect(await t.store.queue.claim(now, 10, 60_000)).toEqual([]);

      const later = now + 1000;
      const moved = await t.store.transaction(
        (tx) =>
          tx.queue.markSentMany(
            [
              { id: a!, lease: now + 60_000, detail: { service_id: 'smtp' }, providerMessageId: 'prov-1' },
              { id: b!, lease: now + 1, detail: { service_id: 'smtp' } },
            ],
            later,
          ),
        { background: true },
      );
      expect(moved).toEqual([a]);
      expect(await messageRow(t.store, a!)).toMatchObject({
        status: 'sent',
        sent_at: later,
        lease_until: null,
        provider_message_id: 'prov-1',
      });
      expect(await messageRow(t.store, b!)).toMatchObject({ status: 'sending', sent_at: null, provider_message_id: null });
      expect(await events(a!)).toEqual(['queued', 'sending {"attempt":1}', 'sent {"service_id":"smtp"}']);
      expect(await events(b!)).toEqual(['queued', 'sending {"attempt":1}']);
      // No endpoint: nothing in the outbox.
      expect(await deliveries()).toEqual([]);
    });

    it('fans the sending and sent events out to an enabled endpoint, numbered in the timeline', async () => {
      const now = t.clock.now();
      const db = databaseOf(t.store);
      const endpoint = {
        org_id: 'acme',
        url: 'https://hooks.example/x',
        description: null,
        disabled_reason: null,
        secret: 's',
        previous_secret: null,
        previous_secret_expires_at: null,
        failing_since: null,
        created_at: now,
        updated_at: now,
      };
      await db
        .insertInto('webhook_endpoints')
        .values([
          { ...endpoint, id: 'all', events: '*', enabled: 1 },
          { ...endpoint, id: 'off', events: '*', enabled: 0 },
        ])
        .execute();
      const [a] = await insertQueued(t.store, 1, now);
      const claimed = await t.store.transaction((tx) => tx.queue.claim(now, 10, 60_000), { durable: false });
      await t.store.transaction(
        (tx) =>
          tx.queue.markSentMany(
            claimed.map((m) => ({ id: m.id, lease: m.lease_until, detail: {} })),
            now + 1,
          ),
        { background: true },
      );
      expect(await deliveries()).toEqual([
        `${a} message.queued queued 1`,
        `${a} message.sending sending 2`,
        `${a} message.sent sent 3`,
      ]);
    });
  });
}
