import { describe, expect, it } from 'vitest';
import { freshAppAll, type TestApp } from '../support/app.js';
import { CONTACT_TEMPLATE, PRIVATE_KEY, PUBLIC_KEY, seedOrg } from '../support/seed.js';
import { bearer, expectError } from '../support/http.js';
import { CONTACT_PARAMS, send, sendOk } from '../support/send.js';
import { expectUnchanged, snapshot } from '../support/stored.js';
import { DYN, ROOMY } from '../support/orgs.js';
import { describeDialects } from '../support/dialects.js';

/**
 * Block list (403 recipient_blocked) and suppression list (451 recipient_suppressed), checked
 * after rendering and before the credit is taken: a refused send stores nothing, uses nothing.
 */

const BLOCKED = ['bad@evil.test', '@blocked.test', 'both@listed.test'];

describeDialects('block list and suppression list at POST /v1/send on %s', (dialect, skip) => {
  let t: TestApp;

  freshAppAll(dialect, skip, async (app) => {
    t = app;
    const security = { allowed_origins: ['example.com'], allow_mobile_apps: true, ip_limit: ROOMY.ip_limit };
    await seedOrg(t.store, {
      plan: ROOMY.plan,
      credits: 1000,
      security: { ...security, block_list: { list: BLOCKED, watch_variable: 'email' } },
      templates: [CONTACT_TEMPLATE, DYN],
      suppressions: [
        { email: 'Gone@Example.com', reason: 'hard_bounce' },
        { email: 'both@listed.test', reason: 'complaint' },
      ],
    });
    // The same lists without a watched variable.
    await seedOrg(t.store, {
      id: 'nowatch',
      plan: ROOMY.plan,
      credits: 1000,
      security: { ...security, block_list: { list: BLOCKED } },
      keys: [{ type: 'private', key: 'sk_nowatch_private_1' }],
      templates: [CONTACT_TEMPLATE, DYN],
    });
    // No lists at all.
    await seedOrg(t.store, {
      id: 'clean',
      plan: ROOMY.plan,
      credits: 1000,
      security,
      keys: [{ type: 'private', key: 'sk_clean_private_1' }],
      templates: [CONTACT_TEMPLATE, DYN],
    });
  });

  const dyn = (params: Record<string, unknown>, key = PRIVATE_KEY) =>
    send(t, { template_id: 'dyn', template_params: params }, bearer(key));

  async function refused(orgId: string, status: number, code: string, res: () => Promise<Awaited<ReturnType<typeof send>>>) {
    const before = await snapshot(t, orgId);
    const err = expectError(await res(), status, code);
    await expectUnchanged(t, orgId, before);
    return err;
  }

  describe('403 recipient_blocked', () => {
    it.skipIf(skip)('when a recipient matches a block-list entry (case-insensitive)', async () => {
      await refused('acme', 403, 'recipient_blocked', () => dyn({ to: 'bad@evil.test' }));
      await refused('acme', 403, 'recipient_blocked', () => dyn({ to: 'BAD@Evil.Test' }));
      await refused('acme', 403, 'recipient_blocked', () => dyn({ to: 'ok@fine.test, Bad Guy <bad@evil.test>' }));
      await sendOk(t, { template_id: 'dyn', template_params: { to: 'good@evil.test' } }, bearer(PRIVATE_KEY));
    });

    it.skipIf(skip)('when a CC or BCC recipient matches', async () => {
      await refused('acme', 403, 'recipient_blocked', () => dyn({ to: 'ok@fine.test', cc: 'bad@evil.test' }));
      await refused('acme', 403, 'recipient_blocked', () => dyn({ to: 'ok@fine.test', bcc: 'bad@evil.test' }));
    });

    it.skipIf(skip)('when a domain entry @blocked.test matches the recipient domain', async () => {
      await refused('acme', 403, 'recipient_blocked', () => dyn({ to: 'anyone@blocked.test' }));
      await refused('acme', 403, 'recipient_blocked', () => dyn({ to: 'ok@fine.test', cc: 'Someone@BLOCKED.test' }));
      await sendOk(t, { template_id: 'dyn', template_params: { to: 'anyone@notblocked.test' } }, bearer(PRIVATE_KEY));
      await sendOk(t, { template_id: 'dyn', template_params: { to: 'blocked.test@fine.test' } }, bearer(PRIVATE_KEY));
    });

    it.skipIf(skip)('when the watched variable holds a blocked value, even if it is not a recipient', async () => {
      // contact: To is fixed (owner@acme.test); `email` only becomes the Reply-To.
      await refused('acme', 403, 'recipient_blocked', () =>
        send(t, { template_id: 'contact', template_params: { ...CONTACT_PARAMS, email: 'bad@evil.test' } }, bearer(PRIVATE_KEY)),
      );
      await refused('acme', 403, 'recipient_blocked', () =>
        send(
          t,
          { template_id: 'contact', template_params: { ...CONTACT_PARAMS, email: 'someone@blocked.test' } },
          { 'x-mail-public-key': PUBLIC_KEY },
        ),
      );
      await sendOk(t, { template_id: 'contact', template_params: CONTACT_PARAMS }, bearer(PRIVATE_KEY));
      // Without a watched variable the same send goes through: the watch is what refused it.
      await sendOk(
        t,
        { template_id: 'contact', template_params: { ...CONTACT_PARAMS, email: 'bad@evil.test' } },
        bearer('sk_nowatch_private_1'),
      );
    });

    it.skipIf(skip)('the block list is per organization', async () => {
      await refused('nowatch', 403, 'recipient_blocked', () => dyn({ to: 'bad@evil.test' }, 'sk_nowatch_private_1'));
      const res = await dyn({ to: 'bad@evil.test', cc: 'anyone@blocked.test' }, 'sk_clean_private_1');
      expect(res.statusCode, res.body).toBe(202);
    });

    it.skipIf(skip)('a recipient blocked and suppressed gets the block-list refusal (403 comes before 451)', async () => {
      await refused('acme', 403, 'recipient_blocked', () => dyn({ to: 'both@listed.test' }));
    });
  });

  describe('451 recipient_suppressed', () => {
    it.skipIf(skip)('for a suppressed To, matched case-insensitively, with no credit used and no message', async () => {
      await refused('acme', 451, 'recipient_suppressed', () => dyn({ to: 'gone@example.com' }));
      await refused('acme', 451, 'recipient_suppressed', () => dyn({ to: 'GONE@EXAMPLE.COM' }));
      await refused('acme', 451, 'recipient_suppressed', () => dyn({ to: 'ok@fine.test, Gone <Gone@example.com>' }));
    });

    it.skipIf(skip)('for a suppressed CC or BCC', async () => {
      await refused('acme', 451, 'recipient_suppressed', () => dyn({ to: 'ok@fine.test', cc: 'gone@example.COM' }));
      await refused('acme', 451, 'recipient_suppressed', () => dyn({ to: 'ok@fine.test', bcc: 'Gone@Example.com' }));
    });

    it.skipIf(skip)('with a public key too', async () => {
      await t.store.suppressions.add('acme', 'Owner@Acme.test', 'manual', t.clock.now());
      try {
        await refused('acme', 451, 'recipient_suppressed', () =>
          send(t, { template_id: 'contact', template_params: CONTACT_PARAMS }, { 'x-mail-public-key': PUBLIC_KEY }),
        );
      } finally {
        await t.store.suppressions.remove('acme', 'owner@acme.test');
      }
      await sendOk(t, { template_id: 'contact', template_params: CONTACT_PARAMS }, { 'x-mail-public-key': PUBLIC_KEY });
    });

    it.skipIf(skip)('an entry added later takes effect at once; a removed one stops refusing', async () => {
      await sendOk(t, { template_id: 'dyn', template_params: { to: 'later@example.com' } }, bearer(PRIVATE_KEY));
      await t.store.suppressions.add('acme', 'LATER@example.com', 'complaint', t.clock.now());
      await refused('acme', 451, 'recipient_suppressed', () => dyn({ to: 'later@example.com' }));
      await t.store.suppressions.remove('acme', 'later@example.com');
      await sendOk(t, { template_id: 'dyn', template_params: { to: 'later@example.com' } }, bearer(PRIVATE_KEY));
    });

    it.skipIf(skip)('the suppression list is per organization', async () => {
      // gone@example.com is suppressed in acme only.
      const res = await dyn({ to: 'gone@example.com' }, 'sk_clean_private_1');
      expect(res.statusCode, res.body).toBe(202);
    });
  });
});
