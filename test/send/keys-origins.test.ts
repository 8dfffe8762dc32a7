import { describe, expect, it } from 'vitest';
import { createKey, revokeKey, rotateKey } from '../../src/admin/keys.js';
import { freshAppAll, type TestApp } from '../support/app.js';
import { CONTACT_TEMPLATE, PRIVATE_KEY, PUBLIC_KEY, seedOrg } from '../support/seed.js';
import { bearer, expectError } from '../support/http.js';
import { CONTACT_PARAMS, send, sendOk } from '../support/send.js';
import { expectUnchanged, snapshot, storedRow } from '../support/stored.js';
import { orgsLike, pkOf, ROOMY, skOf } from '../support/orgs.js';
import { describeDialects } from '../support/dialects.js';

/** Authentication rules 1–7 of the spec as POST /v1/send applies them (send path step 2). */

const ORIGINS = ['example.com', '*.example.com'];

/** An organization like seedOrg's, with keys of its own: `pk_<id>_public_1`, `sk_<id>_private_1`. */
const org = orgsLike(() => ({ credits: 100 }), { allowed_origins: ORIGINS });
const pub = (key: string = PUBLIC_KEY): Record<string, string> => ({ 'x-mail-public-key': key });
const body = (extra: Record<string, unknown> = {}) => ({ template_id: 'contact', template_params: CONTACT_PARAMS, ...extra });

describeDialects('POST /v1/send keys and origins on %s', (dialect, skip) => {
  let t: TestApp;

  freshAppAll(dialect, skip, async (app) => {
    t = app;
    await seedOrg(t.store, {
      plan: ROOMY.plan,
      security: { allowed_origins: ORIGINS, allow_mobile_apps: true, ip_limit: ROOMY.ip_limit },
      templates: [CONTACT_TEMPLATE, { ...CONTACT_TEMPLATE, id: 'frozen', frozen: true }],
    });
    await seedOrg(t.store, org('strict', {}, { require_private_key: true }));
    await seedOrg(t.store, org('browserok', {}, { allow_private_keys_in_browsers: true }));
    await seedOrg(t.store, org('nomobile', {}, { allowed_origins: [], allow_mobile_apps: false }));
    await seedOrg(t.store, org('webonly', {}, { allowed_origins: ['example.com'], allow_mobile_apps: false }));
    await seedOrg(t.store, org('suspended', { suspended: true }));
    await seedOrg(t.store, org('unverified', { email_verified: false }));
  });

  /** Runs a send that must fail with (status, code) and checks it stored nothing and used no credit. */
  async function refused(
    orgId: string,
    status: number,
    code: string,
    payload: Record<string, unknown>,
    headers: Record<string, string>,
  ) {
    const before = await snapshot(t, orgId);
    const err = expectError(await send(t, payload, headers), status, code);
    await expectUnchanged(t, orgId, before);
    return err;
  }

  describe('public key', () => {
    it.skipIf(skip)('is accepted from the X-Mail-Public-Key header', async () => {
      const before = await snapshot(t, 'acme');
      const a = await sendOk(t, body(), pub());
      expect(a.status).toBe('queued');
      expect((await storedRow(t, a.message_id)).key_type).toBe('public');
      expect(await snapshot(t, 'acme')).toEqual({
        messages: before.messages + 1,
        allMessages: before.allMessages + 1,
        credits: before.credits - 1,
      });
    });

    it.skipIf(skip)('is accepted from the body field user_id', async () => {
      const a = await sendOk(t, body({ user_id: PUBLIC_KEY }));
      const row = await storedRow(t, a.message_id);
      expect(row.key_type).toBe('public');
      expect(row.org_id).toBe('acme');
    });

    it.skipIf(skip)('401 invalid_public_key for an unknown pk_ key, in the header or in user_id', async () => {
      await refused('acme', 401, 'invalid_public_key', body(), pub('pk_does_not_exist_1'));
      await refused('acme', 401, 'invalid_public_key', body({ user_id: 'pk_does_not_exist_2' }), {});
    });

    it.skipIf(skip)('401 invalid_public_key for a rotated key; its replacement works', async () => {
      const issued = await createKey(t.store, 'acme', 'public', 'pk_acme_to_rotate_1');
      await sendOk(t, body(), pub('pk_acme_to_rotate_1'));
      const replacement = await rotateKey(t.store, 'acme', issued.key.id);
      await refused('acme', 401, 'invalid_public_key', body(), pub('pk_acme_to_rotate_1'));
      await refused('acme', 401, 'invalid_public_key', body({ user_id: 'pk_acme_to_rotate_1' }), {});
      await sendOk(t, body(), pub(replacement.value));
    });
  });

  describe('private key', () => {
    it.skipIf(skip)('is accepted from Authorization: Bearer', async () => {
      const a = await sendOk(t, body(), bearer(PRIVATE_KEY));
      expect((await storedRow(t, a.message_id)).key_type).toBe('private');
    });

    it.skipIf(skip)('is accepted from the body field accessToken', async () => {
      const a = await sendOk(t, body({ accessToken: PRIVATE_KEY }));
      expect((await storedRow(t, a.message_id)).key_type).toBe('private');
      // Where only a private key will do, accessToken counts as one.
      await sendOk(t, body({ accessToken: skOf('strict') }));
    });

    it.skipIf(skip)('401 invalid_private_key for an unknown sk_ key, in the header or in accessToken', async () => {
      await refused('acme', 401, 'invalid_private_key', body(), bearer('sk_does_not_exist_1'));
      await refused('acme', 401, 'invalid_private_key', body({ accessToken: 'sk_does_not_exist_2' }), {});
    });

    it.skipIf(skip)('401 invalid_private_key for a revoked key', async () => {
      const issued = await createKey(t.store, 'acme', 'private', 'sk_acme_to_revoke_1');
      await sendOk(t, body(), bearer('sk_acme_to_revoke_1'));
      await revokeKey(t.store, 'acme', issued.key.id);
      await refused('acme', 401, 'invalid_private_key', body(), bearer('sk_acme_to_revoke_1'));
      await refused('acme', 401, 'invalid_private_key', body({ accessToken: 'sk_acme_to_revoke_1' }), {});
    });
  });

  describe('401 unauthorized', () => {
    it.skipIf(skip)('when no key is sent', async () => {
      await refused('acme', 401, 'unauthorized', body(), {});
      await refused('acme', 401, 'unauthorized', body({ user_id: '', accessToken: '' }), {});
    });

    it.skipIf(skip)('when the key has neither the pk_ nor the sk_ prefix', async () => {
      await refused('acme', 401, 'unauthorized', body(), pub('test_public_0001'));
      await refused('acme', 401, 'unauthorized', body(), bearer('garbage-key-123'));
      await refused('acme', 401, 'unauthorized', body({ user_id: 'nokeyprefix_0001' }), {});
      await refused('acme', 401, 'unauthorized', body({ accessToken: 'nokeyprefix_0002' }), {});
    });
  });

  describe('organization rules', () => {
    it.skipIf(skip)(
      '403 private_key_required when the organization requires a private key and a public key is used',
      async () => {
        await refused('strict', 403, 'private_key_required', body(), pub(pkOf('strict')));
        await refused('strict', 403, 'private_key_required', body({ user_id: pkOf('strict') }), {});
        await sendOk(t, body(), bearer(skOf('strict')));
      },
    );

    it.skipIf(skip)('403 private_key_in_browser for a private key with an Origin header', async () => {
      await refused('acme', 403, 'private_key_in_browser', body(), { ...bearer(PRIVATE_KEY), origin: 'https://example.com' });
      await refused('acme', 403, 'private_key_in_browser', body({ accessToken: PRIVATE_KEY }), {
        origin: 'https://app.example.com',
      });
    });

    it.skipIf(skip)(
      'a private key with an Origin is accepted when the organization allows private keys in browsers',
      async () => {
        await sendOk(t, body(), { ...bearer(skOf('browserok')), origin: 'https://example.com' });
      },
    );

    it.skipIf(skip)('403 organization_suspended for a suspended organization, with either key', async () => {
      await refused('suspended', 403, 'organization_suspended', body(), bearer(skOf('suspended')));
      await refused('suspended', 403, 'organization_suspended', body(), pub(pkOf('suspended')));
    });

    it.skipIf(skip)('403 email_not_verified when the owner has not verified their e-mail, with either key', async () => {
      await refused('unverified', 403, 'email_not_verified', body(), bearer(skOf('unverified')));
      await refused('unverified', 403, 'email_not_verified', body(), pub(pkOf('unverified')));
    });

    it.skipIf(skip)('403 plan_limit_reached with details.reason template_frozen for a frozen template', async () => {
      const err = await refused('acme', 403, 'plan_limit_reached', body({ template_id: 'frozen' }), bearer(PRIVATE_KEY));
      expect(err.details?.reason).toBe('template_frozen');
      const viaPublic = await refused('acme', 403, 'plan_limit_reached', body({ template_id: 'frozen' }), pub());
      expect(viaPublic.details?.reason).toBe('template_frozen');
    });
  });

  describe('origins of public-key requests', () => {
    it.skipIf(skip)('accepts an Origin on the allowed list, exact or by *.example.com wildcard', async () => {
      await sendOk(t, body(), { ...pub(), origin: 'https://example.com' });
      await sendOk(t, body(), { ...pub(), origin: 'https://app.example.com' });
      await sendOk(t, body(), { ...pub(), origin: 'https://deep.app.example.com' });
      await sendOk(t, body(), { ...pub(), origin: 'http://APP.Example.com:8080' });
    });

    it.skipIf(skip)('403 origin_not_allowed for an Origin not on the list', async () => {
      for (const origin of [
        'https://evil.test',
        'https://example.org',
        'https://evilexample.com',
        'https://example.com.evil.test',
        'null',
      ]) {
        const err = await refused('acme', 403, 'origin_not_allowed', body(), { ...pub(), origin });
        expect(err.details?.reason, origin).not.toBe('no_origin');
      }
    });

    it.skipIf(skip)('uses the Referer when there is no Origin', async () => {
      await sendOk(t, body(), { ...pub(), referer: 'https://app.example.com/contact?x=1' });
      await sendOk(t, body(), { ...pub(), referer: 'https://example.com/' });
      await refused('acme', 403, 'origin_not_allowed', body(), { ...pub(), referer: 'https://evil.test/example.com' });
      await refused('acme', 403, 'origin_not_allowed', body(), { ...pub(), referer: 'https://evilexample.com/page' });
    });

    it.skipIf(skip)('the Origin wins over the Referer', async () => {
      await refused('acme', 403, 'origin_not_allowed', body(), {
        ...pub(),
        origin: 'https://evil.test',
        referer: 'https://example.com/',
      });
      await sendOk(t, body(), { ...pub(), origin: 'https://example.com', referer: 'https://evil.test/' });
    });

    it.skipIf(skip)(
      'no Origin and no Referer without "allow mobile apps": 403 origin_not_allowed, reason no_origin, even with an empty list',
      async () => {
        const err = await refused('nomobile', 403, 'origin_not_allowed', body(), pub(pkOf('nomobile')));
        expect(err.details?.reason).toBe('no_origin');
        const viaBody = await refused('nomobile', 403, 'origin_not_allowed', body({ user_id: pkOf('nomobile') }), {});
        expect(viaBody.details?.reason).toBe('no_origin');
        // With a list, too: the list is for web pages, it does not let apps in.
        const web = await refused('webonly', 403, 'origin_not_allowed', body(), pub(pkOf('webonly')));
        expect(web.details?.reason).toBe('no_origin');
      },
    );

    it.skipIf(skip)('an empty allowed-origins list admits no web page', async () => {
      await refused('nomobile', 403, 'origin_not_allowed', body(), { ...pub(pkOf('nomobile')), origin: 'https://example.com' });
    });

    it.skipIf(skip)('an organization without mobile apps still takes pages from its allowed origins', async () => {
      await sendOk(t, body(), { ...pub(pkOf('webonly')), origin: 'https://example.com' });
      await refused('webonly', 403, 'origin_not_allowed', body(), { ...pub(pkOf('webonly')), origin: 'https://app.example.com' });
    });

    it.skipIf(skip)('no Origin and no Referer with "allow mobile apps" is accepted', async () => {
      await sendOk(t, body(), pub());
    });

    it.skipIf(skip)('private keys are not subject to the allowed-origins list', async () => {
      // A server call (no Origin) to an organization that admits no app or page.
      await sendOk(t, body(), bearer(skOf('nomobile')));
    });
  });
});
