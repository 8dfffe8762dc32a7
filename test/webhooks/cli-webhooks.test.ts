import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { systemClock } from '../../src/domain/clock.js';
import { insertQueued } from '../support/delivery.js';
import { Closer } from '../support/cleanup.js';
import { seedOrg } from '../support/seed.js';
import { freshDatabase, openTestStore } from '../support/stores.js';
import { startReceiver, type Receiver } from '../support/webhooks/receiver.js';
import { describeDialects } from '../support/dialects.js';

interface Run {
  code: number;
  out: string;
  err: string;
}

describeDialects('mailroom webhooks on %s', (dialect, skip) => {
  let closer: Closer;
  let env: Record<string, string>;
  let receiver: Receiver;
  beforeEach(async () => {
    closer = new Closer();
    if (skip) return;
    const db = await freshDatabase(dialect);
    closer.defer(() => db.drop());
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mailroom-cli-webhooks-'));
    closer.defer(() => fs.rmSync(dir, { recursive: true, force: true }));
    env = {
      MAILROOM_DATABASE_URL: db.url,
      MAILROOM_DATA_DIR: dir,
      MAILROOM_LOG_LEVEL: 'silent',
      MAILROOM_WEBHOOK_SECRET_GRACE_SECONDS: '3600',
    };
    const store = await openTestStore(db.url, systemClock);
    try {
      await seedOrg(store);
      // Two messages whose `message.queued` events a range replay can send.
      await insertQueued(store, 2, Date.now() - 1000, 'outbox');
    } finally {
      await store.close();
    }
    receiver = await startReceiver([], closer);
  });
  afterEach(async () => {
    await closer.closeAll();
  });

  const run = async (...argv: string[]): Promise<Run> => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await main(
      argv,
      env,
      (l) => out.push(l),
      (l) => err.push(l),
    );
    return { code, out: out.join('\n'), err: err.join('\n') };
  };

  it.skipIf(skip)('add, list, test, rotate-secret, disable, enable, deliveries, replay, replay-range, remove', async () => {
    const added = await run(
      'webhooks',
      'add',
      'acme',
      receiver.url,
      '--events',
      'message.delivered,webhook.test',
      '--id',
      'crm',
      '--description',
      'CRM',
    );
    expect(added.code, added.err).toBe(0);
    const secret = /secret \(shown this once\): (whsec_\S+)/.exec(added.out)?.[1] ?? '';
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(added.out).toContain(`crm  enabled   message.delivered,webhook.test  ${receiver.url}  # CRM`);
    receiver.secrets = [secret];

    const list = await run('webhooks', 'list', 'acme');
    expect(list.out).toContain('crm  enabled');
    expect(list.out).not.toContain(secret);

    const tested = await run('webhooks', 'test', 'acme', 'crm');
    expect(tested.code, tested.err).toBe(0);
    expect(tested.out).toMatch(/^ok: HTTP 200 in \d+ ms; logged as whd_\d+$/);
    expect(receiver.received).toHaveLength(1);
    expect(receiver.received[0]?.verifiedWith).toEqual([secret]);

    const rotated = await run('webhooks', 'rotate-secret', 'acme', 'crm');
    const next = /secret \(shown this once\): (whsec_\S+)/.exec(rotated.out)?.[1] ?? '';
    expect(next).toMatch(/^whsec_/);
    expect(rotated.out).toMatch(/The old secret signs too until \d{4}-\d\d-\d\dT/);
    receiver.secrets = [next, secret];
    receiver.script([500]);
    const failing = await run('webhooks', 'test', 'acme', 'crm');
    expect(failing.out).toMatch(/^failed: HTTP 500/);
    expect(receiver.received[1]?.verifiedWith).toEqual([next, secret]);
    const now = await run('webhooks', 'rotate-secret', 'acme', 'crm', '--grace-seconds', '0');
    expect(now.out).toContain('The old secret stopped signing now.');

    expect((await run('webhooks', 'disable', 'acme', 'crm')).out).toContain('crm  disabled (disabled by an operator)');
    expect((await run('webhooks', 'enable', 'acme', 'crm')).out).toContain('crm  enabled');

    const log = await run('webhooks', 'deliveries', 'acme', 'crm');
    expect(log.out.split('\n')).toHaveLength(2);
    expect(log.out).toMatch(/^whd_\d+ +failed +webhook\.test/m);
    const failedOnly = await run('webhooks', 'deliveries', 'acme', 'crm', '--state', 'failed');
    expect(failedOnly.out.split('\n')).toHaveLength(1);
    const failedId = /^(whd_\d+)/.exec(failedOnly.out)?.[1] ?? '';
    // A test event is sent once: replaying it is refused (2, conflict), and it stays as it was.
    const testReplay = await run('webhooks', 'replay', 'acme', failedId);
    expect([testReplay.code, testReplay.out]).toEqual([2, '']);
    expect(testReplay.err).toContain(`Webhook delivery "${failedId}" is a webhook.test event`);
    expect((await run('webhooks', 'deliveries', 'acme', 'crm', '--event-type', 'webhook.test')).out.split('\n')).toHaveLength(2);
    expect((await run('webhooks', 'deliveries', 'acme', 'crm', '--event-type', 'message.delivered')).out).toBe('No deliveries.');
    expect((await run('webhooks', 'deliveries', 'acme', 'crm', '--message', 'msg_none')).out).toBe('No deliveries.');
    const shown = await run('webhooks', 'delivery', 'acme', failedId);
    expect(shown.code, shown.err).toBe(0);
    expect(shown.out).toMatch(new RegExp(`^${failedId} +failed +webhook\\.test`));
    expect(shown.out).toContain('  endpoint crm  webhook-id test_');
    expect(shown.out).toMatch(/^ {2}#1 {2}\d{4}-\d\d-\d\dT\S+ {2}HTTP 500 {2}\d+ ms/m);
    expect(shown.out).toContain('"answer 500"');

    // An endpoint for everything: the range replay queues the two messages' events it never got.
    const all = await run('webhooks', 'add', 'acme', receiver.url, '--id', 'all');
    expect(all.code, all.err).toBe(0);
    const since = new Date(Date.now() - 3_600_000).toISOString();
    const until = new Date(Date.now() + 60_000).toISOString();
    expect((await run('webhooks', 'replay-range', 'acme', 'all', '--since', since, '--until', until, '--only-failed')).out).toBe(
      'Queued 0 deliveries.',
    );
    expect((await run('webhooks', 'replay-range', 'acme', 'all', '--since', since, '--until', until)).out).toBe(
      'Queued 2 deliveries.',
    );
    const queuedEvents = await run('webhooks', 'deliveries', 'acme', 'all', '--event-type', 'message.queued');
    expect(queuedEvents.out.split('\n')).toHaveLength(2);
    const eventId = /^(whd_\d+)/.exec(queuedEvents.out)?.[1] ?? '';
    expect((await run('webhooks', 'replay', 'acme', eventId)).out).toBe(`Queued ${eventId} again.`);
    expect((await run('webhooks', 'delivery', 'acme', eventId)).out).toMatch(
      new RegExp(`^${eventId} +pending +message\\.queued`),
    );

    // To a disabled endpoint: queued, and it says it waits.
    await run('webhooks', 'disable', 'acme', 'all');
    const waiting = await run('webhooks', 'replay', 'acme', eventId);
    expect(waiting.out).toBe(
      `Queued ${eventId} again.\nEndpoint "all" is disabled: the replay is queued and ` +
        `waits until the endpoint is enabled again. (mailroom webhooks enable acme all)`,
    );
    await run('webhooks', 'enable', 'acme', 'all');

    expect((await run('webhooks', 'remove', 'acme', 'all')).out).toBe('Removed all.');
    expect((await run('webhooks', 'list', 'acme')).out).not.toContain('all  ');
  });

  it.skipIf(skip)('refuses bad input with a usage error (1) and unknown names with 2', async () => {
    const badEvent = await run('webhooks', 'add', 'acme', receiver.url, '--events', 'message.exploded');
    expect(badEvent.code).toBe(1);
    expect(badEvent.err).toContain('--events: "message.exploded" is not an event type');
    const badUrl = await run('webhooks', 'add', 'acme', 'javascript:alert(1)');
    expect([badUrl.code, badUrl.err.split('\n')[0]]).toEqual([1, 'URL: must be an absolute http or https URL']);
    expect((await run('webhooks', 'add', 'acme', receiver.url, '--id', 'deliveries')).code).toBe(1);
    expect((await run('webhooks', 'deliveries', 'acme', 'crm', '--state', 'lost')).code).toBe(2);
    expect((await run('webhooks', 'frobnicate', 'acme', 'x')).code).toBe(1);
    expect((await run('webhooks', 'list')).code).toBe(1);
    const noOrg = await run('webhooks', 'list', 'nobody');
    expect([noOrg.code, noOrg.err]).toEqual([2, 'Organization "nobody" does not exist.']);
    const noHook = await run('webhooks', 'test', 'acme', 'nope');
    expect([noHook.code, noHook.err]).toEqual([2, 'Webhook endpoint "nope" does not exist in organization "acme".']);
    expect((await run('webhooks', 'replay', 'acme', 'whd_999')).code).toBe(2);
    await run('webhooks', 'add', 'acme', receiver.url, '--id', 'crm');
    expect((await run('webhooks', 'deliveries', 'acme', 'crm', '--state', 'lost')).code).toBe(1);
    expect((await run('webhooks', 'replay-range', 'acme', 'crm', '--since', 'yesterday', '--until', 'now')).code).toBe(1);
    const tooLong = await run(
      'webhooks',
      'replay-range',
      'acme',
      'crm',
      '--since',
      '2026-01-01T00:00:00Z',
      '--until',
      '2026-03-01T00:00:00Z',
    );
    expect([tooLong.code, tooLong.err.split('\n')[0]]).toEqual([1, '--until must be at most 31 days after --since']);
    expect((await run('webhooks', 'deliveries', 'acme', 'crm', '--event-type', 'message.exploded')).code).toBe(1);
    const noDelivery = await run('webhooks', 'delivery', 'acme', 'whd_999');
    expect([noDelivery.code, noDelivery.err]).toEqual([2, 'Webhook delivery "whd_999" does not exist in organization "acme".']);
    expect((await run('webhooks', 'add', 'acme', receiver.url, '--id', 'crm')).code).toBe(2);
  });

  it.skipIf(skip)("mailroom apply creates the file's endpoints and prints a generated secret once", async () => {
    const file = path.join(env.MAILROOM_DATA_DIR ?? '', 'hooks.yaml');
    fs.writeFileSync(file, `organizations:\n  - id: acme\n    webhooks:\n      - { id: audit, url: "${receiver.url}" }\n`);
    const first = await run('apply', file);
    expect(first.code, first.err).toBe(0);
    expect(first.out).toContain('  webhook acme/audit: created');
    expect(first.out).toMatch(/^ {2}generated webhook secret for acme\/audit: whsec_[A-Za-z0-9+/]{43}=$/m);
    const second = await run('apply', file);
    expect(second.out).toBe('No changes.');
  });

  it.skipIf(skip)('production refuses http and loopback URLs', async () => {
    env = { ...env, MAILROOM_ENV: 'production' };
    const refused = await run('webhooks', 'add', 'acme', receiver.url);
    expect([refused.code, refused.err.split('\n')[0]]).toEqual([1, 'URL: must use https in production']);
    const loopback = await run('webhooks', 'add', 'acme', 'https://127.0.0.1/hook');
    expect(loopback.err).toContain('blocked address');
  });
});
