import { randomBytes } from 'node:crypto';
import { beforeAll, expect, it } from 'vitest';
import { closerPerTest, tempDir } from '../support/cleanup.js';
import { freePort } from '../support/smtp-sink.js';
import { requireBuild, startCli } from '../support/processes.js';
import { seedOrg } from '../support/seed.js';
import { freshStore } from '../support/stores.js';
import { newSvixSecret, svixHeaders } from '../support/events/signing.js';
import { providerEventRows } from '../support/events/record.js';
import { describeDialects } from '../support/dialects.js';

beforeAll(requireBuild);

/**
 * The intake answers 2xx only after the event is stored: SIGKILL a real `mailroom serve` in the
 * middle of a burst of signed Resend events, and every event it acknowledged is in the database
 * (the ones cut off were never acknowledged, so Resend would send them again).
 */
describeDialects('provider events survive a SIGKILL of the API on %s', (dialect, skip) => {
  const c = closerPerTest();

  it.skipIf(skip)('every event answered 2xx before the kill is stored', { timeout: 90_000 }, async () => {
    const t = await freshStore(dialect);
    c.defer(() => t.cleanup());
    const secret = newSvixSecret();
    await seedOrg(t.store, { services: [{ id: 'rs', provider: 'outbox', default: true, events: { source: 'resend', secret } }] });
    const token = await t.store.services.eventsToken('acme', 'rs');
    const port = await freePort();
    const api = startCli(
      ['serve'],
      {
        MAILROOM_DATABASE_URL: t.database.url,
        MAILROOM_DATA_DIR: tempDir(c),
        MAILROOM_PORT: String(port),
        MAILROOM_HOST: '127.0.0.1',
        MAILROOM_BASE_URL: `http://127.0.0.1:${port}`,
        MAILROOM_WORKER: 'off',
        MAILROOM_LOG_LEVEL: 'error',
      },
      c,
    );
    await api.waitForOutput('listening on');

    const url = `http://127.0.0.1:${port}/v1/provider-events/${token ?? ''}`;
    const acknowledged: string[] = [];
    let killed = false;
    const one = async (i: number): Promise<void> => {
      const id = `msg_crash_${i}_${randomBytes(4).toString('hex')}`;
      // The signing clock is the wall clock: the child process verifies against it.
      const body = JSON.stringify({
        type: 'email.delivered',
        created_at: new Date().toISOString(),
        data: { email_id: `re-${i}`, to: [`r${i}@example.com`] },
      });
      try {
        const res = await fetch(url, {
          method: 'POST',
          body,
          headers: { 'content-type': 'application/json', ...svixHeaders(secret, body, Date.now(), id) },
        });
        if (res.status === 200) acknowledged.push(id);
        else if (!killed) throw new Error(`event ${i}: ${res.status} ${await res.text()}`);
      } catch (err) {
        if (!killed) throw err;
      }
    };
    // 8 clients in parallel; the kill comes once 60 are acknowledged, with requests in flight.
    const clients = Array.from({ length: 8 }, async (_, k) => {
      for (let i = k; i < 2000 && !killed; i += 8) {
        await one(i);
        if (acknowledged.length >= 60 && !killed) {
          killed = true;
          api.child.kill('SIGKILL');
        }
      }
    });
    await Promise.all(clients);
    await api.exited;
    expect(killed).toBe(true);
    expect(acknowledged.length).toBeGreaterThanOrEqual(60);

    const stored = new Set((await providerEventRows(t.store)).map((r) => r.event_key));
    expect(acknowledged.filter((id) => !stored.has(id))).toEqual([]);
  });
});
