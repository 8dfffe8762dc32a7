import { expect, it } from 'vitest';
import { applyConfig } from '../../src/admin/apply.js';
import { closerPerTest } from '../support/cleanup.js';
import { describeDialects, freshStoreEach } from '../support/dialects.js';
import { org } from '../support/orgs.js';
import { dialogue, plain, startSubmissionFor, stubPipeline } from '../support/submission.js';

const SEND_ONLY = 'sk_acme_smtp_send_only_1';

/**
 * Issue 29 over SMTP submission: a send_only key logs in and sends (it only sends), and its
 * AUTH and each mail transaction record its use, as an API request does (once a minute).
 */
describeDialects('SMTP submission and key use on %s', (dialect, skip) => {
  const c = closerPerTest();
  const t = freshStoreEach(dialect, skip, (s) =>
    applyConfig(s.store, {
      organizations: [org('acme', { keys: [{ type: 'private', key: SEND_ONLY, scope: 'send_only', name: 'Mailer' }] })],
    }),
  );

  it.skipIf(skip)('a send_only key logs in (235) and sends; last_used_at is set at AUTH, then once a minute', async () => {
    const s = await startSubmissionFor({ ...t, closer: c, pipeline: stubPipeline() });
    const used = async () => (await t.store.keys.findByValue(SEND_ONLY))?.last_used_at;
    expect(await used()).toBeNull();
    const d = await dialogue(s.listener.port, c);
    await d.command('EHLO client.test');
    expect((await d.command(`AUTH PLAIN ${plain('acme', SEND_ONLY)}`))[0]).toBe('235 2.7.0 Authentication successful');
    await t.store.keyUse.idle();
    const atAuth = t.clock.now();
    expect(await used()).toBe(atAuth);

    // A transaction within the minute writes nothing; one a minute later writes its time.
    t.clock.advance(30_000);
    expect((await d.command('MAIL FROM:<a@acme.test>'))[0]).toMatch(/^250 /);
    expect((await d.command('RSET'))[0]).toMatch(/^250 /);
    await t.store.keyUse.idle();
    expect(await used()).toBe(atAuth);
    t.clock.advance(30_000);
    expect((await d.command('MAIL FROM:<a@acme.test>'))[0]).toMatch(/^250 /);
    await t.store.keyUse.idle();
    expect(await used()).toBe(t.clock.now());
    expect(s.warnings).toEqual([]);
  });
});
