import { expect, it } from 'vitest';
import { freshAppEach, type TestApp } from '../support/app.js';
import { admin, createOrg } from '../support/admin.js';
import { expectError } from '../support/http.js';
import { configuredAddresses } from '../../src/inbound/wiring.js';
import { describeDialects } from '../support/dialects.js';

const RELAY = { provider: 'smtp', default: true, smtp: { host: 'smtp.example.com', port: 587 } };

describeDialects("a service's bounce_domain and complaint_address in the admin API, on %s", (dialect, skip) => {
  let t: TestApp;
  freshAppEach(dialect, skip, (app) => {
    t = app;
  });

  it.skipIf(skip)('stored lower-cased, shown back, served by the listener; GET minus meta is a valid PUT', async () => {
    await createOrg(t);
    const res = await admin(t, 'PUT', '/organizations/acme/services/relay', {
      ...RELAY,
      bounce_domain: 'Bounces.Acme.test',
      complaint_address: 'FBL@acme.test',
    });
    expect(res.statusCode, res.body).toBeLessThan(300);
    const shown = (await admin(t, 'GET', '/organizations/acme/services/relay')).json() as Record<string, unknown>;
    expect(shown).toMatchObject({ bounce_domain: 'bounces.acme.test', complaint_address: 'fbl@acme.test' });
    const addresses = await configuredAddresses(t.store);
    expect([...addresses.domains]).toEqual(['bounces.acme.test']);
    expect([...addresses.complaintAddresses]).toEqual(['fbl@acme.test']);
    const { id: _id, version: _v, created_at: _c, updated_at: _u, events_url: _e, ...body } = shown;
    expect((await admin(t, 'PUT', '/organizations/acme/services/relay', body)).statusCode).toBe(200);
  });

  it.skipIf(skip)('a bounce_domain that is no domain name is 400 invalid_body', async () => {
    await createOrg(t);
    for (const bad of ['localhost', 'bounces..acme.test', 'bounce+x@acme.test', '-x.acme.test', 'acme.test.']) {
      expectError(
        await admin(t, 'PUT', '/organizations/acme/services/relay', { ...RELAY, bounce_domain: bad }),
        400,
        'invalid_body',
      );
    }
  });
});
