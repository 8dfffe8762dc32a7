import type { LightMyRequestResponse } from 'fastify';
import { expect, it, vi } from 'vitest';
import { requestDigest } from '../../src/send/idempotency-key.js';
import { IDEMPOTENCY_TTL_MS } from '../../src/storage/idempotency.js';
import { freshAppEach, type TestApp } from '../support/app.js';
import { PUBLIC_KEY, seedOrg } from '../support/seed.js';
import { bearer, expectAccepted, expectError } from '../support/http.js';
import { creditsOf, messageCount } from '../support/stored.js';
import { PARAMS, post, sendBody } from '../support/send.js';
import { describeDialects } from '../support/dialects.js';

const DAY_MS = 24 * 60 * 60 * 1000;

const withKey = (key: string, headers: Record<string, string> = bearer()) => ({ ...headers, 'idempotency-key': key });

/** The parts of a response a replay must repeat exactly. */
function snapshot(res: LightMyRequestResponse) {
  return {
    status: res.statusCode,
    body: res.body,
    contentType: res.headers['content-type'],
    messageId: res.headers['x-mail-message-id'],
    mailStatus: res.headers['x-mail-status'],
  };
}

describeDialects('Idempotency-Key on POST /v1/send on %s', (dialect, skip) => {
  let t!: TestApp;
  freshAppEach(dialect, skip, (app) => {
    t = app;
  });

  it('keeps the 24-hour retention of the spec', () => {
    expect(IDEMPOTENCY_TTL_MS).toBe(DAY_MS);
  });

  it.skipIf(skip)('same key and same body: the original response is replayed byte for byte, one message', async () => {
    await seedOrg(t.store);
    const first = await post(t, sendBody(), withKey('order-1001'));
    const accepted = expectAccepted(first);
    t.clock.advance(60_000);
    const second = await post(t, sendBody(), withKey('order-1001'));
    expect(snapshot(second)).toEqual(snapshot(first));
    expect(second.rawPayload.equals(first.rawPayload)).toBe(true);
    expect(second.json<{ status_token: string }>().status_token).toBe(accepted.status_token);
    expect(await messageCount(t)).toBe(1);
    expect(await creditsOf(t)).toBe(99);
  });

  it.skipIf(skip)('a replay of a held response stays the held response', async () => {
    await seedOrg(t.store, { credits: 0 });
    const first = await post(t, sendBody(), withKey('held-1'));
    expectAccepted(first, 'held');
    // Credits arrive in between; the retry still gets what the first request got.
    await t.store.organizations.update('acme', { credits: 10 }, t.clock.now());
    const second = await post(t, sendBody(), withKey('held-1'));
    expect(snapshot(second)).toEqual(snapshot(first));
    expect(await messageCount(t)).toBe(1);
  });

  it.skipIf(skip)('a replay answers before the credit check (reject mode, credits used up since)', async () => {
    await seedOrg(t.store, { credits: 1, when_out_of_credits: 'reject' });
    const first = await post(t, sendBody(), withKey('last-credit'));
    expectAccepted(first);
    expect(await creditsOf(t)).toBe(0);
    const again = await post(t, sendBody(), withKey('last-credit'));
    expect(snapshot(again)).toEqual(snapshot(first));
    // A new key is refused: the replay really came from the stored response.
    expectError(await post(t, sendBody(), withKey('other-key')), 402, 'insufficient_credits');
    expect(await messageCount(t)).toBe(1);
  });

  it.skipIf(skip)('same key with a different body is 409 idempotency_conflict', async () => {
    await seedOrg(t.store);
    expectAccepted(await post(t, sendBody(), withKey('k-1')));
    const other = sendBody({ template_params: { ...PARAMS, message: 'Something else' } });
    const err = expectError(await post(t, other, withKey('k-1')), 409, 'idempotency_conflict');
    expect(err.details?.reason).toBe('different_body');
    expectError(await post(t, sendBody({ service_id: 'outbox' }), withKey('k-1')), 409, 'idempotency_conflict');
    expect(await messageCount(t)).toBe(1);
    expect(await creditsOf(t)).toBe(99);
  });

  it.skipIf(skip)('a key whose first request is still in flight is 409 idempotency_conflict', async () => {
    await seedOrg(t.store);
    // Hold the first request inside the template lookup (after its idempotency check) until released.
    const lookup = t.store.catalog.template.bind(t.store.catalog);
    let entered: () => void = () => undefined;
    const inside = new Promise<void>((resolve) => {
      entered = resolve;
    });
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const spy = vi.spyOn(t.store.catalog, 'template').mockImplementationOnce(async (orgId, id) => {
      entered();
      await gate;
      return lookup(orgId, id);
    });
    try {
      const first = post(t, sendBody(), withKey('in-flight-1'));
      await inside;
      const err = expectError(await post(t, sendBody(), withKey('in-flight-1')), 409, 'idempotency_conflict');
      expect(err.details?.reason).toBe('in_progress');
      // Another body under the busy key is refused as well.
      const other = sendBody({ template_params: { ...PARAMS, message: 'Another' } });
      expectError(await post(t, other, withKey('in-flight-1')), 409, 'idempotency_conflict');
      expect(await messageCount(t)).toBe(0);

      release();
      const done = await first;
      expectAccepted(done);
      expect(snapshot(await post(t, sendBody(), withKey('in-flight-1')))).toEqual(snapshot(done));
      expect(await messageCount(t)).toBe(1);
      expect(await creditsOf(t)).toBe(99);
    } finally {
      release();
      spy.mockRestore();
    }
  });

  // PostgreSQL serves several API processes: a claim row written by another process is the
  // only sign of its request in flight. (SQLite serves one process, which knows its own.)
  it.skipIf(skip || dialect !== 'postgres')('PostgreSQL: a claim taken by another process is 409 in_progress', async () => {
    const org = await seedOrg(t.store);
    const body = sendBody();
    // What the route computes for this request: the endpoint and the body as parsed.
    await t.store.idempotency.claim(org.id, 'in-flight-2', requestDigest('/v1/send', body), t.clock.now());
    const err = expectError(await post(t, body, withKey('in-flight-2')), 409, 'idempotency_conflict');
    expect(err.details?.reason).toBe('in_progress');
    await t.store.idempotency.claim(org.id, 'in-flight-3', 'digest-of-another-body', t.clock.now());
    expectError(await post(t, body, withKey('in-flight-3')), 409, 'idempotency_conflict');
    expect(await messageCount(t)).toBe(0);
    expect(await creditsOf(t)).toBe(100);
  });

  it.skipIf(skip)(
    'the key is checked before the Idempotency-Key (the send path order in ' +
      'the README): no key or a wrong one is 401 even with a malformed header',
    async () => {
      await seedOrg(t.store);
      expectError(await post(t, sendBody(), { 'idempotency-key': 'bad key!' }), 401, 'unauthorized');
      expectError(
        await post(t, sendBody(), { ...bearer('sk_not_a_key_000000000000'), 'idempotency-key': 'bad key!' }),
        401,
        'invalid_private_key',
      );
    },
  );

  it.skipIf(skip)('empty, over-255-character or malformed keys are 400 invalid_idempotency_key', async () => {
    await seedOrg(t.store);
    for (const key of ['', 'k'.repeat(256), 'bad key!', 'clé', 'a/b', 'a,b']) {
      expectError(await post(t, sendBody(), withKey(key)), 400, 'invalid_idempotency_key');
    }
    expect(await messageCount(t)).toBe(0);
    expect(await creditsOf(t)).toBe(100);
    // The boundaries that are allowed: 255 characters, and every character class of the spec.
    expectAccepted(await post(t, sendBody(), withKey('k'.repeat(255))));
    expectAccepted(await post(t, sendBody(), withKey('Az09_-:.')));
    expect(await messageCount(t)).toBe(2);
  });

  it.skipIf(skip)('keys are per organization: the same key in two organizations gives two messages', async () => {
    await seedOrg(t.store);
    await seedOrg(t.store, {
      id: 'beta',
      keys: [
        { type: 'public', key: 'pk_beta_public_0001' },
        { type: 'private', key: 'sk_beta_private_0001' },
      ],
    });
    const a = expectAccepted(await post(t, sendBody(), withKey('shared-key')));
    const b = expectAccepted(await post(t, sendBody(), withKey('shared-key', bearer('sk_beta_private_0001'))));
    expect(b.message_id).not.toBe(a.message_id);
    expect(await messageCount(t, 'acme')).toBe(1);
    expect(await messageCount(t, 'beta')).toBe(1);
    expect((await t.store.messages.get('beta', b.message_id))?.org_id).toBe('beta');
  });

  it.skipIf(skip)('public and private keys of one organization share its key space', async () => {
    await seedOrg(t.store);
    const first = await post(t, sendBody(), withKey('one-org', { 'x-mail-public-key': PUBLIC_KEY }));
    expectAccepted(first);
    const second = await post(t, sendBody(), withKey('one-org', bearer()));
    expect(snapshot(second)).toEqual(snapshot(first));
    expect(await messageCount(t)).toBe(1);
  });

  it.skipIf(skip)('20 identical requests raced in parallel create exactly one message', async () => {
    await seedOrg(t.store);
    const responses = await Promise.all(Array.from({ length: 20 }, () => post(t, sendBody(), withKey('race-1'))));
    const ok = responses.filter((r) => r.statusCode === 202);
    const conflicts = responses.filter((r) => r.statusCode === 409);
    expect(ok.length + conflicts.length).toBe(20);
    expect(ok.length).toBeGreaterThanOrEqual(1);
    const first = ok[0];
    if (first === undefined) throw new Error('no accepted response');
    for (const r of ok) expect(snapshot(r)).toEqual(snapshot(first));
    for (const r of conflicts) expect(r.json<{ error: { code: string } }>().error.code).toBe('idempotency_conflict');
    expect(await messageCount(t)).toBe(1);
    expect(await creditsOf(t)).toBe(99);
    // Once it finished, every retry is the replay.
    expect(snapshot(await post(t, sendBody(), withKey('race-1')))).toEqual(snapshot(first));
  });

  it.skipIf(skip)('a failed request does not use up its key: the corrected retry is accepted', async () => {
    await seedOrg(t.store);
    const broken = sendBody({ template_params: { name: 'Ada' } });
    expectError(await post(t, broken, withKey('fix-me')), 422, 'invalid_template_params');
    // The same failing request runs again (not a 409: nothing was recorded).
    expectError(await post(t, broken, withKey('fix-me')), 422, 'invalid_template_params');
    const fixed = await post(t, sendBody(), withKey('fix-me'));
    expectAccepted(fixed);
    expect(await messageCount(t)).toBe(1);
    // Now the key is used: the broken body is a different body.
    expectError(await post(t, broken, withKey('fix-me')), 409, 'idempotency_conflict');
    expect(snapshot(await post(t, sendBody(), withKey('fix-me')))).toEqual(snapshot(fixed));
  });

  it.skipIf(skip)('a 402 or 404 leaves no record either', async () => {
    await seedOrg(t.store, { credits: 0, when_out_of_credits: 'reject' });
    expectError(await post(t, sendBody(), withKey('later')), 402, 'insufficient_credits');
    expectError(await post(t, sendBody({ template_id: 'nope' }), withKey('later-2')), 404, 'template_not_found');
    await t.store.organizations.update('acme', { credits: 2 }, t.clock.now());
    expectAccepted(await post(t, sendBody(), withKey('later')));
    expectAccepted(await post(t, sendBody(), withKey('later-2')));
    expect(await messageCount(t)).toBe(2);
  });

  it.skipIf(skip)('within 24 hours the key replays; after 24 hours it can be reused for a new message', async () => {
    await seedOrg(t.store);
    const first = await post(t, sendBody(), withKey('daily'));
    const a = expectAccepted(first);
    t.clock.advance(DAY_MS - 1);
    expect(snapshot(await post(t, sendBody(), withKey('daily')))).toEqual(snapshot(first));
    expect(await messageCount(t)).toBe(1);

    t.clock.advance(2); // 24 h + 1 ms after the first request
    const later = expectAccepted(await post(t, sendBody(), withKey('daily')));
    expect(later.message_id).not.toBe(a.message_id);
    expect(await messageCount(t)).toBe(2);
    expect(await creditsOf(t)).toBe(98);
  });

  it.skipIf(skip)('after 24 hours a different body under the old key is accepted too', async () => {
    await seedOrg(t.store);
    expectAccepted(await post(t, sendBody(), withKey('daily-2')));
    t.clock.advance(DAY_MS + 1);
    const other = sendBody({ template_params: { ...PARAMS, message: 'Tomorrow' } });
    expectAccepted(await post(t, other, withKey('daily-2')));
    expect(await messageCount(t)).toBe(2);
  });
});
