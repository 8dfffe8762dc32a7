import { expect, it } from 'vitest';
import { freshAppEach, type TestApp } from '../support/app.js';
import { admin, createOrg } from '../support/admin.js';
import { expectError } from '../support/http.js';
import { describeDialects } from '../support/dialects.js';

const SMTP = {
  provider: 'smtp',
  default: true,
  smtp: { host: 'smtp.example.com', port: 587, user: 'mailer', pass: 'hunter2-password' },
};
const POSTMARK = { provider: 'postmark', default: false, postmark: { server_token: 'pm-token-value' } };

type Fields = Array<{ field: string; message: string }>;
const fieldsOf = (error: { details?: Record<string, unknown> }): Fields => (error.details?.fields ?? []) as Fields;

/**
 * Issue 29: the provider of an existing service cannot change. Before, a PUT or PATCH naming
 * another provider replaced it (the PATCH dropped the old provider's block).
 */
describeDialects('admin services: the provider is fixed once the service exists on %s', (dialect, skip) => {
  let t!: TestApp;
  freshAppEach(dialect, skip, (app) => {
    t = app;
  });

  it.skipIf(skip)('PUT and PATCH naming another provider are 400 invalid_body naming provider; nothing changes', async () => {
    await createOrg(t);
    expect((await admin(t, 'PUT', '/organizations/acme/services/relay', SMTP)).statusCode).toBe(201);
    const before = await t.store.services.get('acme', 'relay');

    const put = expectError(
      await admin(t, 'PUT', '/organizations/acme/services/relay', { ...POSTMARK, default: true }),
      400,
      'invalid_body',
    );
    expect(fieldsOf(put)).toEqual([
      { field: 'provider', message: expect.stringContaining('cannot change on an existing service (it is smtp)') },
    ]);
    const patch = expectError(
      await admin(t, 'PATCH', '/organizations/acme/services/relay', { provider: 'postmark', postmark: { server_token: 'x' } }),
      400,
      'invalid_body',
    );
    expect(fieldsOf(patch).map((f) => f.field)).toEqual(['provider']);
    expect(await t.store.services.get('acme', 'relay')).toEqual(before);

    // The same provider goes through, by PUT (GET's body back) and by PATCH naming it.
    const shown = (await admin(t, 'GET', '/organizations/acme/services/relay')).json<Record<string, unknown>>();
    const same = await admin(t, 'PUT', '/organizations/acme/services/relay', shown);
    expect(same.statusCode, same.body).toBe(200);
    const named = await admin(t, 'PATCH', '/organizations/acme/services/relay', { provider: 'smtp', max_per_second: 3 });
    expect(named.statusCode, named.body).toBe(200);
    expect((await t.store.services.get('acme', 'relay'))?.max_per_second).toBe(3);

    // A new service takes any provider; a deleted one may come back with another.
    expect((await admin(t, 'PUT', '/organizations/acme/services/pm', POSTMARK)).statusCode).toBe(201);
    expect((await admin(t, 'DELETE', '/organizations/acme/services/pm')).statusCode).toBe(204);
    const again = await admin(t, 'PUT', '/organizations/acme/services/pm', { provider: 'outbox', default: false });
    expect(again.statusCode, again.body).toBe(201);
  });
});
