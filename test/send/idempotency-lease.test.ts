import { describe, expect, it } from 'vitest';
import { requestDigest } from '../../src/send/idempotency-key.js';
import { IN_FLIGHT_LEASE_MS } from '../../src/storage/idempotency.js';
import { freshAppEach, type TestApp } from '../support/app.js';
import { bearer, expectAccepted, expectError } from '../support/http.js';
import { seedOrg } from '../support/seed.js';
import { post, sendBody } from '../support/send.js';
import { creditsOf, messageCount } from '../support/stored.js';
import { postgresAvailable } from '../support/stores.js';

const pgUp = await postgresAvailable();
const withKey = (key: string) => ({ ...bearer(), 'idempotency-key': key });
const response = { status: 202, headers: {}, body: '{}' };

/**
 * The claim row of a request in flight (PostgreSQL: it is how API processes see each other's)
 * whose request died with its process or lost the database: a retry with the key is 409
 * `in_progress` for IN_FLIGHT_LEASE_MS, then takes the claim over (issue 25 §1: was 60 s).
 */
describe('the in-flight claim of an Idempotency-Key on PostgreSQL', () => {
  let t!: TestApp;
  freshAppEach('postgres', !pgUp, (app) => {
    t = app;
  });

  it('lasts 20 s: the connect bound (5 s) and the statement bound (15 s) of one request', () => {
    expect(IN_FLIGHT_LEASE_MS).toBe(20_000);
  });

  it.skipIf(!pgUp)('an abandoned claim is 409 in_progress for 20 s, then a retry with the key is accepted', async () => {
    await seedOrg(t.store);
    const body = sendBody();
    // What a request that died after its claim leaves behind.
    await t.store.idempotency.claim('acme', 'died-1', requestDigest('/v1/send', body), t.clock.now());
    t.clock.advance(19_000);
    expect(expectError(await post(t, body, withKey('died-1')), 409, 'idempotency_conflict').details?.reason).toBe('in_progress');
    t.clock.advance(1000);
    expectAccepted(await post(t, body, withKey('died-1')));
    expect(await messageCount(t)).toBe(1);
  });

  it.skipIf(!pgUp)('a request slower than the lease cannot complete a claim a retry took over, nor remove it', async () => {
    await seedOrg(t.store);
    const hash = requestDigest('/v1/send', sendBody());
    const slow = await t.store.idempotency.claim('acme', 'slow-1', hash, t.clock.now());
    expect(slow).toMatchObject({ kind: 'claimed' });
    t.clock.advance(IN_FLIGHT_LEASE_MS);
    const retry = await t.store.idempotency.claim('acme', 'slow-1', hash, t.clock.now());
    expect(retry).toMatchObject({ kind: 'claimed' });
    const at = (c: typeof slow) => (c.kind === 'claimed' ? c.at : undefined);
    // The slow one's commit is fenced off: its transaction rolls back (409), no second message.
    expect(await t.store.idempotency.complete('acme', 'slow-1', response, at(slow))).toBe(false);
    await t.store.idempotency.release('acme', 'slow-1', at(slow));
    expect(await t.store.idempotency.complete('acme', 'slow-1', response, at(retry))).toBe(true);
    expect(await creditsOf(t)).toBe(100);
  });
});
