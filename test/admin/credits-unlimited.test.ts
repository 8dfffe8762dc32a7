import { expect, it } from 'vitest';
import { releaseMessage } from '../../src/credits/holds.js';
import { applyConfig } from '../../src/admin/apply.js';
import type { OrganizationResource } from '../../src/admin/routes/resources.js';
import { freshAppEach, type TestApp } from '../support/app.js';
import { admin, createOrg, orgBody } from '../support/admin.js';
import { expectAccepted, expectError } from '../support/http.js';
import { PUBLIC_KEY, seedOrg } from '../support/seed.js';
import { post, sendBody } from '../support/send.js';
import { creditsOf, eventTypes, messageCount } from '../support/stored.js';
import { describeDialects } from '../support/dialects.js';

/**
 * Issue 29: an organization setting `credits: unlimited` switches the spec's credit rules off
 * (no credit taken, never held or refused for one); wherever it is not set they apply unchanged.
 */
describeDialects('credits unlimited on %s', (dialect, skip) => {
  let t!: TestApp;
  freshAppEach(dialect, skip, (app) => {
    t = app;
  });

  const orgJson = async (): Promise<OrganizationResource> => {
    const res = await admin(t, 'GET', '/organizations/acme');
    expect(res.statusCode, res.body).toBe(200);
    return res.json<OrganizationResource>();
  };

  it.skipIf(skip)('an unlimited organization with 0 credits sends: 202 queued, no credit row change', async () => {
    await seedOrg(t.store, { credits: 'unlimited', when_out_of_credits: 'reject', hold_queue_limit: 0 });
    expect(await creditsOf(t)).toBe(0);
    const accepted = expectAccepted(await post(t, sendBody()), 'queued');
    expectAccepted(await post(t, sendBody(), { 'x-mail-public-key': PUBLIC_KEY }), 'queued');
    const row = await t.store.messages.get('acme', accepted.message_id);
    expect(row?.status).toBe('queued');
    expect(row?.credit_taken).toBe(false);
    expect(await creditsOf(t)).toBe(0);
    expect(await messageCount(t)).toBe(2);
    const status = (await admin(t, 'GET', '/organizations/acme/credits')).json<Record<string, unknown>>();
    expect(status).toMatchObject({ credits: 0, unlimited: true, held: 0 });
    const overview = (await admin(t, 'GET', '/organizations/acme/overview')).json<{ credits: { balance: number | null } }>();
    expect(overview.credits.balance).toBeNull();
  });

  it.skipIf(skip)('a metered organization with 0 credits holds, or refuses in reject mode, as before', async () => {
    await seedOrg(t.store, { credits: 0 });
    expect((await orgJson()).credits).toBe(0);
    expectAccepted(await post(t, sendBody()), 'held');
    await admin(t, 'PATCH', '/organizations/acme', { when_out_of_credits: 'reject' });
    expectError(await post(t, sendBody()), 402, 'insufficient_credits');
    await seedOrg(t.store, { credits: 'metered', when_out_of_credits: 'hold' });
    expect((await t.store.organizations.get('acme'))?.credit_mode).toBe('metered');
    expectAccepted(await post(t, sendBody()), 'held');
    expect(await creditsOf(t)).toBe(0);
  });

  it.skipIf(skip)('switching to unlimited releases the held messages, uncharged; switching back meters again', async () => {
    await seedOrg(t.store, { credits: 0 });
    const held = [];
    for (let i = 0; i < 3; i++) {
      t.clock.advance(1);
      held.push(expectAccepted(await post(t, sendBody()), 'held').message_id);
    }
    const res = await admin(t, 'PATCH', '/organizations/acme', { credits: 'unlimited' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json<OrganizationResource>()).toMatchObject({ credits: 'unlimited', held: 0 });
    for (const id of held) {
      const m = await t.store.messages.get('acme', id);
      expect(m?.status).toBe('queued');
      expect(m?.credit_taken).toBe(false);
      expect(await eventTypes(t, id)).toEqual(['held', 'released']);
    }
    const events = await t.store.messages.events(held[0] as string);
    expect(events.at(-1)?.detail).toMatchObject({ reason: 'credits_unlimited' });
    expect(await creditsOf(t)).toBe(0);

    const back = await admin(t, 'PATCH', '/organizations/acme', { credits: 'metered' });
    expect(back.statusCode, back.body).toBe(200);
    expect(back.json<OrganizationResource>().credits).toBe(0);
    expectAccepted(await post(t, sendBody()), 'held');
  });

  it.skipIf(skip)('an operator release of a held message in an unlimited organization takes no credit', async () => {
    await seedOrg(t.store, { credits: 0 });
    const id = expectAccepted(await post(t, sendBody()), 'held').message_id;
    // Switched by a write that skips the release (as a send racing the switch would leave it).
    await t.store.organizations.update('acme', { credit_mode: 'unlimited' }, t.clock.now());
    expect(await releaseMessage(t.store, 'acme', id)).toBe('queued');
    expect((await t.store.messages.get('acme', id))?.credit_taken).toBe(false);
    expect(await creditsOf(t)).toBe(0);
  });

  it.skipIf(skip)('the YAML file: credits unlimited, kept when left out, metered again with the balance kept', async () => {
    await seedOrg(t.store, { credits: 7 });
    const file = await seedOrg(t.store, { credits: 'unlimited' });
    expect((await orgJson()).credits).toBe('unlimited');
    const org = await t.store.organizations.get('acme');
    expect(org).toMatchObject({ credit_mode: 'unlimited', credits: 7 });
    // Left out: an existing organization keeps its mode (a file never undoes what it does not name).
    const { credits: _c, ...rest } = file;
    await applyConfig(t.store, { organizations: [rest] });
    expect((await orgJson()).credits).toBe('unlimited');
    // A number names the metered mode; as before it is a starting balance only.
    await seedOrg(t.store, { credits: 50 });
    expect((await orgJson()).credits).toBe(7);
    expect((await t.store.organizations.get('acme'))?.credit_mode).toBe('metered');
    // Left out on a new organization: metered from 0, the spec's rules.
    await applyConfig(t.store, { organizations: [{ id: 'plain' }] });
    expect(await t.store.organizations.get('plain')).toMatchObject({ credit_mode: 'metered', credits: 0 });
  });

  it.skipIf(skip)('the admin API: create, GET, PUT round trip and PATCH of credits', async () => {
    await createOrg(t, 'acme', { credits: 'unlimited' });
    const created = await orgJson();
    expect(created.credits).toBe('unlimited');
    // GET → PUT as is changes nothing.
    const again = await admin(t, 'PUT', '/organizations/acme', created);
    expect(again.statusCode, again.body).toBe(200);
    expect(again.json<OrganizationResource>()).toEqual(created);
    // PUT without credits keeps the mode; with a number it is metered, the balance unchanged.
    expect((await admin(t, 'PUT', '/organizations/acme', orgBody({ name: 'acme' }))).json<OrganizationResource>().credits).toBe(
      'unlimited',
    );
    expect(
      (await admin(t, 'PUT', '/organizations/acme', orgBody({ name: 'acme', credits: 9 }))).json<OrganizationResource>().credits,
    ).toBe(0);
    expect((await admin(t, 'PATCH', '/organizations/acme', { credits: 'unlimited' })).json<OrganizationResource>().credits).toBe(
      'unlimited',
    );
    // PATCH changes the mode only: a balance is topped up at POST …/credits.
    const refused = expectError(await admin(t, 'PATCH', '/organizations/acme', { credits: 5 }), 400, 'invalid_body');
    expect(JSON.stringify(refused.details)).toContain('credits');
    expectError(await admin(t, 'PUT', '/organizations/other', orgBody({ credits: 'lots' })), 400, 'invalid_body');
    // The API's default stays the spec's: a new organization without credits is metered from 0.
    await createOrg(t, 'plain');
    expect((await admin(t, 'GET', '/organizations/plain')).json<OrganizationResource>().credits).toBe(0);
    // A top-up of an unlimited organization still adds to the kept balance.
    const topUp = await admin(t, 'POST', '/organizations/acme/credits', { amount: 3 });
    expect(topUp.json()).toEqual({ credits: 3, released: [] });
    expect((await orgJson()).credits).toBe('unlimited');
  });
});
