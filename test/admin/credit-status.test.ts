import { expect, it } from 'vitest';
import { freshAppEach, type TestApp } from '../support/app.js';
import { seedOrg } from '../support/seed.js';
import { admin } from '../support/admin.js';
import { expectError } from '../support/http.js';
import { insertMessage } from '../support/db.js';
import { describeDialects } from '../support/dialects.js';

describeDialects('GET …/credits on %s', (dialect, skip) => {
  let t!: TestApp;
  freshAppEach(dialect, skip, (app) => {
    t = app;
  });

  it.skipIf(skip)('shows balance, overdraft, mode and held messages, read fresh after a top-up', async () => {
    await seedOrg(t.store, { credits: 0, overdraft: 3, security: { public_overdraft: true } });
    await insertMessage(t.store, 'acme', 'msg_held_1', 'held', 1000, false);
    const res = await admin(t, 'GET', '/organizations/acme/credits');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({
      org_id: 'acme',
      credits: 0,
      unlimited: false,
      overdraft: 3,
      public_overdraft: true,
      when_out_of_credits: 'hold',
      hold_queue_limit: expect.any(Number),
      held: 1,
    });
    expect((await admin(t, 'POST', '/organizations/acme/credits', { amount: 4 })).statusCode).toBe(200);
    expect((await admin(t, 'GET', '/organizations/acme/credits')).json()).toMatchObject({ credits: 3, held: 0 });
    expectError(await admin(t, 'GET', '/organizations/ghost/credits'), 404, 'not_found');
    expectError(await admin(t, 'GET', '/organizations/acme/credits', undefined, null), 401, 'unauthorized');
  });
});
