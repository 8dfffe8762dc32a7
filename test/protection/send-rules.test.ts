import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshApp, type TestApp } from '../support/app.js';
import { CONTACT_TEMPLATE, seedOrg } from '../support/seed.js';
import { CONTACT_PARAMS } from '../support/send.js';
import { storedContent, snapshot } from '../support/stored.js';
import { orgsLike, type OrgInput, type SecurityInput, type TemplateSeed, ORIGIN } from '../support/orgs.js';
import { expectAccepted, expectError, expectLimited } from '../support/http.js';
import { startTurnstile, type FakeTurnstile } from '../support/turnstile.js';
import { describeDialects } from '../support/dialects.js';

/**
 * Authentication rules 9 and 10 through POST /v1/send: headless blocking, the dynamic-recipient
 * lock (CAPTCHA, sender fields, content, links), the link allowlist of templates that enforce
 * it, and the recipient daily limit.
 */

const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36';
const HEADLESS =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/124.0.6367.60 Safari/537.36';

const DYN_PARAMS = [
  { name: 'name', type: 'string' as const, required: true },
  { name: 'email', type: 'email' as const, required: true },
  { name: 'message', type: 'string' as const },
  { name: 'bio', type: 'html' as const },
  { name: 'note', type: 'string' as const },
  { name: 'sender', type: 'email' as const },
];

/** "Send a copy to yourself": the recipient comes from a parameter. */
const COPY_TO_SENDER: TemplateSeed = {
  id: 'copy',
  subject: 'Your message, {{name}}',
  to: '{{email}}',
  from_email: 'noreply@acme.test',
  html: '<p>Hi {{name}}</p><p>{{message}}</p><p><a href="https://www.acme.test/help">Help</a></p>',
  text: '{{message}}',
  params: DYN_PARAMS,
  allow_dynamic_recipients: true,
  captcha: true,
};

const templates: TemplateSeed[] = [
  CONTACT_TEMPLATE,
  COPY_TO_SENDER,
  { ...COPY_TO_SENDER, id: 'copy-nocaptcha', captcha: false },
  { ...COPY_TO_SENDER, id: 'copy-notallowed', allow_dynamic_recipients: false },
  {
    ...COPY_TO_SENDER,
    id: 'cc-notallowed',
    to: 'owner@acme.test',
    cc: '{{email}}',
    allow_dynamic_recipients: false,
    captcha: false,
  },
  { ...COPY_TO_SENDER, id: 'copy-senders', from_name: '{{name}}', reply_to: '{{email}}' },
  { ...COPY_TO_SENDER, id: 'copy-from', from_email: '{{sender}}' },
  {
    ...COPY_TO_SENDER,
    id: 'static-from',
    to: 'owner@acme.test',
    from_email: '{{sender}}',
    captcha: false,
    allow_dynamic_recipients: false,
  },
  { ...COPY_TO_SENDER, id: 'copy-raw', html: '<p>{{name}}</p><div>{{{note}}}</div>' },
  {
    ...CONTACT_TEMPLATE,
    id: 'links',
    enforce_link_allowlist: true,
    html: '<p>{{message}}</p><a href="{{url}}">Open</a><img src="https://cdn.acme.test/logo.png">',
    strict_params: false,
    params: [...(CONTACT_TEMPLATE.params ?? []), { name: 'url', type: 'url' as const, required: true }],
  },
];

/** Security settings are the second argument here: these rules are about them. */
const orgOf = orgsLike(() => ({ captcha: { site_key: 'site', secret_key: 'secret-acme' }, templates }), {
  link_domains: ['acme.test', 'example.com'],
});
const org = (id: string, security: SecurityInput = {}): OrgInput => orgOf(id, {}, security);

describeDialects('headless blocking, dynamic-recipient lock and links on %s', (dialect, skip) => {
  let t: TestApp;
  let ts: FakeTurnstile;

  beforeAll(async () => {
    if (skip) return;
    ts = await startTurnstile(['secret-acme']);
    t = await freshApp(dialect, { MAILROOM_TURNSTILE_VERIFY_URL: ts.url });
    await seedOrg(t.store, org('acme'));
    await seedOrg(t.store, org('nobots', { block_headless: true }));
    await seedOrg(t.store, org('daily', { recipient_daily_limit: 3 }));
  });
  afterAll(async () => {
    if (skip) return;
    await t.cleanup();
    await ts.close();
  });

  const pub = (orgId = 'acme', extra: Record<string, string> = {}) => ({
    'x-mail-public-key': `pk_${orgId}_public_1`,
    origin: ORIGIN,
    ...extra,
  });
  const priv = (orgId = 'acme') => ({ authorization: `Bearer sk_${orgId}_private_1` });
  const send = (payload: Record<string, unknown>, headers: Record<string, string>) =>
    t.app.inject({ method: 'POST', url: '/v1/send', payload, headers });
  const token = () => ts.issue('example.com');
  const copy = (params: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) => ({
    template_id: 'copy',
    template_params: { name: 'Ann', email: 'ann@example.org', message: 'Hello', ...params },
    turnstile_token: token(),
    ...extra,
  });

  async function securityOf(orgId: string) {
    const o = await t.store.organizations.get(orgId);
    if (o === undefined) throw new Error(`no organization ${orgId}`);
    return o.security;
  }

  async function refused(
    orgId: string,
    status: number,
    code: string,
    payload: Record<string, unknown>,
    headers: Record<string, string>,
  ) {
    const before = await snapshot(t, orgId);
    const err = expectError(await send(payload, headers), status, code);
    expect(await snapshot(t, orgId)).toEqual(before);
    return err;
  }

  describe('headless browsers (block_headless)', () => {
    const contact = { template_id: 'contact', template_params: CONTACT_PARAMS };

    it.skipIf(skip)('403 headless_blocked for headless Chrome, PhantomJS and Playwright user agents', async () => {
      for (const ua of [
        HEADLESS,
        'Mozilla/5.0 (Unknown; Linux x86_64) AppleWebKit/538.1 (KHTML, like Gecko) PhantomJS/2.1.1 Safari/538.1',
        'Playwright/1.44.0 (x64; ubuntu 22.04) node/20.12',
      ]) {
        const err = await refused('nobots', 403, 'headless_blocked', contact, pub('nobots', { 'user-agent': ua }));
        expect(typeof err.details?.reason).toBe('string');
      }
    });

    it.skipIf(skip)('403 headless_blocked for the HeadlessChrome client hint behind a normal user agent', async () => {
      await refused(
        'nobots',
        403,
        'headless_blocked',
        contact,
        pub('nobots', { 'user-agent': CHROME, 'sec-ch-ua': '"Chromium";v="124", "HeadlessChrome";v="124"' }),
      );
    });

    it.skipIf(skip)(
      'normal browsers pass; so do headless ones where the organization does not block them, and private keys',
      async () => {
        for (const ua of [
          CHROME,
          'Mozilla/5.0 (Macintosh; Intel Mac OS X 14.4; rv:125.0) Gecko/20100101 Firefox/125.0',
          'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_4) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15',
        ]) {
          expectAccepted(
            await send(contact, pub('nobots', { 'user-agent': ua, 'sec-ch-ua': '"Chromium";v="124", "Google Chrome";v="124"' })),
          );
        }
        expectAccepted(await send(contact, pub('acme', { 'user-agent': HEADLESS })));
        expectAccepted(await send(contact, { ...priv('nobots'), 'user-agent': HEADLESS }));
      },
    );
  });

  describe('dynamic recipients (rule 10)', () => {
    it.skipIf(skip)('a public-key send with CAPTCHA reaches the recipient from the parameters', async () => {
      const a = expectAccepted(await send(copy(), pub()));
      expect((await storedContent(t, a.message_id)).to.map((x) => x.address)).toEqual(['ann@example.org']);
    });

    it.skipIf(skip)(
      '403 dynamic_recipient_not_allowed without allow_dynamic_recipients, for public and private keys, To or CC',
      async () => {
        await refused('acme', 403, 'dynamic_recipient_not_allowed', copy({}, { template_id: 'copy-notallowed' }), pub());
        await refused('acme', 403, 'dynamic_recipient_not_allowed', copy({}, { template_id: 'copy-notallowed' }), priv());
        const err = await refused(
          'acme',
          403,
          'dynamic_recipient_not_allowed',
          copy({}, { template_id: 'cc-notallowed' }),
          priv(),
        );
        expect(err.details).toEqual({ fields: ['cc'] });
      },
    );

    it.skipIf(skip)(
      '403 dynamic_recipient_requires_captcha for public keys when the template has no CAPTCHA; private keys may',
      async () => {
        await refused('acme', 403, 'dynamic_recipient_requires_captcha', copy({}, { template_id: 'copy-nocaptcha' }), pub());
        expectAccepted(await send(copy({}, { template_id: 'copy-nocaptcha' }), priv()));
      },
    );

    it.skipIf(skip)('the CAPTCHA itself is still required: 403 captcha_required without a token', async () => {
      await refused('acme', 403, 'captcha_required', copy({}, { turnstile_token: undefined }), pub());
    });

    it.skipIf(skip)(
      '403 dynamic_field_not_allowed: From name and Reply-To from parameters with a dynamic recipient',
      async () => {
        const err = await refused('acme', 403, 'dynamic_field_not_allowed', copy({}, { template_id: 'copy-senders' }), pub());
        expect(err.details).toEqual({ fields: ['from_name', 'reply_to'] });
        expectAccepted(await send(copy({}, { template_id: 'copy-senders' }), priv()));
      },
    );

    it.skipIf(skip)('403 dynamic_field_not_allowed: the From address from parameters, for every public-key send', async () => {
      const locked = await refused(
        'acme',
        403,
        'dynamic_field_not_allowed',
        copy({ sender: 'boss@acme.test' }, { template_id: 'copy-from' }),
        pub(),
      );
      expect(locked.details).toEqual({ fields: ['from_email'] });
      const plain = await refused(
        'acme',
        403,
        'dynamic_field_not_allowed',
        { template_id: 'static-from', template_params: { name: 'A', email: 'a@example.org', sender: 'boss@acme.test' } },
        pub(),
      );
      expect(plain.details).toEqual({ fields: ['from_email'] });
      expectAccepted(
        await send(
          { template_id: 'static-from', template_params: { name: 'A', email: 'a@example.org', sender: 'boss@acme.test' } },
          priv(),
        ),
      );
    });

    it.skipIf(skip)(
      '422 invalid_template_params content_locked: HTML parameters, raw insertions, values over 500 characters',
      async () => {
        const html = await refused('acme', 422, 'invalid_template_params', copy({ bio: '<b>me</b>' }), pub());
        expect(html.details).toMatchObject({ reason: 'content_locked', issues: [{ param: 'bio', code: 'content_locked' }] });
        const raw = await refused(
          'acme',
          422,
          'invalid_template_params',
          copy({ note: 'plain words' }, { template_id: 'copy-raw' }),
          pub(),
        );
        expect(raw.details).toMatchObject({ reason: 'content_locked', issues: [{ param: 'note' }] });
        const long = await refused('acme', 422, 'invalid_template_params', copy({ message: 'x'.repeat(501) }), pub());
        expect(long.details).toMatchObject({ reason: 'content_locked', issues: [{ param: 'message' }] });
        expectAccepted(await send(copy({ message: 'x'.repeat(500) }), pub()));
        // Not locked: the same values with a private key.
        expectAccepted(await send(copy({ bio: '<b>me</b>', message: 'x'.repeat(501) }), priv()));
      },
    );

    it.skipIf(skip)(
      '403 link_not_allowed for links outside the link domains, by host only; allowed domains and subdomains pass',
      async () => {
        const err = await refused(
          'acme',
          403,
          'link_not_allowed',
          copy({ message: 'Claim your prize at https://evil.test/claim?user=ann@example.org now' }),
          pub(),
        );
        expect(err.details).toEqual({ hosts: ['evil.test'] });
        expect(JSON.stringify(err)).not.toContain('claim?user');
        const www = await refused('acme', 403, 'link_not_allowed', copy({ message: 'see www.phish.test' }), pub());
        expect(www.details).toEqual({ hosts: ['www.phish.test'] });
        expectAccepted(await send(copy({ message: 'Docs at https://docs.acme.test/a and https://example.com/b' }), pub()));
        // A private key is not locked.
        expectAccepted(await send(copy({ message: 'https://evil.test/' }), priv()));
      },
    );
  });

  describe('templates that enforce the link allowlist', () => {
    const links = (url: string) => ({ template_id: 'links', template_params: { ...CONTACT_PARAMS, url } });

    it.skipIf(skip)('check every key: href from a parameter, static images, text', async () => {
      for (const headers of [priv(), pub()]) {
        const err = await refused('acme', 403, 'link_not_allowed', links('https://evil.test/x'), headers);
        expect(err.details).toEqual({ hosts: ['evil.test'] });
        expectAccepted(await send(links('https://shop.example.com/x'), headers));
      }
    });

    it.skipIf(skip)('an empty link-domain list refuses every link', async () => {
      await t.store.organizations.update(
        'acme',
        { security: { ...(await securityOf('acme')), link_domains: [] } },
        t.clock.now(),
      );
      try {
        const err = await refused('acme', 403, 'link_not_allowed', links('https://example.com/x'), priv());
        expect(err.details).toEqual({ hosts: ['cdn.acme.test', 'example.com'] });
      } finally {
        await t.store.organizations.update(
          'acme',
          { security: { ...(await securityOf('acme')), link_domains: ['acme.test', 'example.com'] } },
          t.clock.now(),
        );
      }
    });
  });

  describe('recipient daily limit', () => {
    const to = (email: string) => copy({ email });

    it.skipIf(skip)(
      '429 rate_limited scope recipient after recipient_daily_limit public sends to one address per UTC day',
      async () => {
        t.clock.set(Date.UTC(2026, 2, 10, 22, 0, 0));
        for (let i = 0; i < 3; i++) expectAccepted(await send(to('Victim@Example.org'), pub('daily')));
        const before = await snapshot(t, 'daily');
        const res = await send(to('victim@example.org'), pub('daily'));
        const retryAfter = expectLimited(res, 'recipient');
        expect(retryAfter).toBe(2 * 3600);
        expect(await snapshot(t, 'daily')).toEqual(before);
        // Another address, and private-key sends to this one, are not limited.
        expectAccepted(await send(to('other@example.org'), pub('daily')));
        expectAccepted(await send(to('victim@example.org'), priv('daily')));
        // The next UTC day starts afresh.
        t.clock.set(Date.UTC(2026, 2, 11, 0, 0, 1));
        expectAccepted(await send(to('victim@example.org'), pub('daily')));
      },
    );

    it.skipIf(skip)('the default is 5 per day', async () => {
      t.clock.set(Date.UTC(2026, 2, 12, 9, 0, 0));
      for (let i = 0; i < 5; i++) expectAccepted(await send(to('five@example.org'), pub()));
      expectLimited(await send(to('five@example.org'), pub()), 'recipient');
    });

    it.skipIf(skip)('a send refused after the count (no credits, reject mode) gives its count back', async () => {
      t.clock.set(Date.UTC(2026, 2, 13, 9, 0, 0));
      await t.store.organizations.update('daily', { credits: 0, when_out_of_credits: 'reject' }, t.clock.now());
      for (let i = 0; i < 5; i++) expectError(await send(to('refund@example.org'), pub('daily')), 402, 'insufficient_credits');
      await t.store.organizations.update('daily', { credits: 100 }, t.clock.now());
      for (let i = 0; i < 3; i++) expectAccepted(await send(to('refund@example.org'), pub('daily')));
      expectLimited(await send(to('refund@example.org'), pub('daily')), 'recipient');
    });
  });
});
