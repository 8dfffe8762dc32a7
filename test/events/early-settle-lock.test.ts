import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { admin } from '../support/admin.js';
import { deliveryHarness, seedSmtpOrg, send, smtpService, view, type MessageView } from '../support/delivery.js';
import { databaseOf, lockWaitsOn } from '../support/db.js';
import { waitFor } from '../support/smtp-sink.js';
import { CONTACT_TEMPLATE } from '../support/seed.js';
import { postgresAvailable } from '../support/stores.js';
import type { TestApp } from '../support/app.js';
import { heldRelay } from '../support/held-relay.js';
import { newSvixSecret, svixHeaders } from '../support/events/signing.js';
import { post } from '../support/events/intake.js';
import { suppressionRows } from '../support/events/record.js';

const pgUp = await postgresAvailable();
const RESEND_ID = '9b2c8e51-7d4a-4f0e-8a61-3c5d2e1f0a99';
const OWNER = 'owner@acme.test';
const SVIX_ID = 'msg_race_0001';

/**
 * Backends waiting for a provider-id lock (advisory) held by a transaction that has written this
 * schema's provider_events: the settle queued behind the event, and no other test file's.
 */
async function settleWaitsForEvent(t: TestApp): Promise<boolean> {
  const r = await sql<{ n: string }>`select count(distinct w.pid) as n from pg_locks w
    where w.locktype = 'advisory' and not w.granted
      and exists (select 1 from pg_locks b where b.relation = 'provider_events'::regclass and b.granted and b.pid =
      any(pg_blocking_pids(w.pid)))`.execute(databaseOf(t.store));
  return Number(r.rows[0]?.n ?? 0) > 0;
}

/**
 * PostgreSQL only (SQLite runs one transaction at a time): the event and the settle that
 * records the provider id it names commit at the same moment. Here the event's transaction has
 * looked for the id (not there yet) and is held before its commit, by a row of the same key
 * another transaction inserted and has not committed, while the worker settles the message.
 * Without a lock both miss each other: the settle commits `sent` without the event, which is
 * then stored unmatched. With the provider-id lock the settle waits for the event and takes it.
 */
describe('an event and the settle of its provider id committing at once, on postgres', () => {
  const h = deliveryHarness('postgres');

  it.skipIf(!pgUp)('the settle waits for the event and applies it', async () => {
    const t = await h.app();
    const relay = await heldRelay(h.closer, `OK ${RESEND_ID}`);
    const secret = newSvixSecret();
    await seedSmtpOrg(t.store, smtpService(relay.port, { events: { source: 'resend', secret } }), {
      templates: [CONTACT_TEMPLATE],
    });
    const shown = await admin(t, 'GET', '/organizations/acme/services/smtp');
    const eventsPath = new URL(shown.json<{ events_url: string }>().events_url).pathname;
    const { worker } = h.worker(t);
    const id = await send(t);
    const running = worker.runOnce();
    await relay.received();

    // The blocker: a row with the event's key, inserted and not committed.
    let unblock: () => void = () => undefined;
    const blocked = new Promise<void>((resolve) => {
      unblock = resolve;
    });
    let inserted: () => void = () => undefined;
    const ready = new Promise<void>((resolve) => {
      inserted = resolve;
    });
    const blocker = databaseOf(t.store)
      .connection()
      .execute(async (conn) => {
        await sql`begin`.execute(conn);
        await conn
          .insertInto('provider_events')
          .values({
            source: 'resend',
            scope: 'service:smtp',
            event_key: SVIX_ID,
            service_id: 'smtp',
            org_id: 'acme',
            message_id: null,
            type: 'bounced',
            recipient: null,
            at: 0,
            detail: '{}',
            received_at: 0,
            provider_message_id: null,
          })
          .execute();
        inserted();
        await blocked;
        await sql`rollback`.execute(conn);
      });
    await ready;

    const body = JSON.stringify({
      type: 'email.bounced',
      created_at: '2026-01-01T00:00:05.000Z',
      data: { email_id: RESEND_ID, to: [OWNER], bounce: { type: 'Permanent', subType: 'General', message: 'No such user' } },
    });
    const posted = post(t, eventsPath, body, svixHeaders(secret, body, t.clock.now(), SVIX_ID));
    await waitFor(async () => (await lockWaitsOn(t.store, 'provider_events')) === 1, 15_000, 'the event to wait at its insert');

    relay.release();
    // The race, seen rather than assumed: the settle queues behind the event's provider-id lock
    // (without that lock it would commit `sent` without the event, which is then stored unmatched).
    await waitFor(() => settleWaitsForEvent(t), 15_000, 'the settle to wait for the event');
    unblock();
    await blocker;
    const res = await posted;
    expect(res.statusCode, res.body).toBe(200);
    expect(await running).toBe(1);

    const v = (await view(t, id)) as MessageView & { recipients?: Array<{ address: string; state: string }> };
    expect(v.status).toBe('bounced');
    expect(v.recipients).toEqual([expect.objectContaining({ address: OWNER, state: 'bounced' })]);
    expect(await suppressionRows(t.store)).toEqual([{ email: OWNER, reason: 'hard_bounce', message_id: id }]);
  });
});
