import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/env.js';
import { parseConfigText } from '../../src/resources/config-file.js';
import { linkDomain } from '../../src/domain/link-domains.js';
import { hostAllowed } from '../../src/protection/links.js';
import { admin, orgBody } from '../support/admin.js';
import { expectError, bearer } from '../support/http.js';
import { freshAppEach, type TestApp } from '../support/app.js';
import { PRIVATE_KEY, seedOrg } from '../support/seed.js';
import { send } from '../support/send.js';
import { describeDialects } from '../support/dialects.js';

/**
 * Issue 25: link domains are validated as domain names (any text was stored before) and kept
 * in one form, the A-label a URL's host has, so an IDN entry matches its links.
 */
describe('linkDomain', () => {
  it('keeps host names in their lower-cased A-label form; *. and one trailing dot are other spellings', () => {
    expect(linkDomain('Example.COM')).toBe('example.com');
    expect(linkDomain('*.example.com')).toBe('example.com');
    expect(linkDomain('example.com.')).toBe('example.com');
    expect(linkDomain('exämple.com')).toBe('xn--exmple-cua.com');
    expect(linkDomain('xn--exmple-cua.com')).toBe('xn--exmple-cua.com');
    expect(linkDomain(' mail.example.co.uk ')).toBe('mail.example.co.uk');
  });

  it('refuses schemes, ports, paths, users, IP addresses, single labels and stray wildcards', () => {
    for (const bad of [
      'https://example.com',
      'example.com/x',
      'example.com:443',
      'user@example.com',
      '192.0.2.1',
      '[::1]',
      'localhost',
      '*',
      '*.com.',
      'a.*.example.com',
      'example..com',
      'exa mple.com',
      '-example.com',
      'example.com..',
      'ex%41mple.com',
      '.example.com',
    ]) {
      expect(linkDomain(bad), bad).toBeUndefined();
    }
  });

  it('an entry stored before the rule still covers what it meant, and an IDN entry now matches its links', () => {
    expect(hostAllowed('www.example.com', ['https://example.com/x'])).toBe(true);
    expect(hostAllowed('xn--exmple-cua.com', ['exämple.com'])).toBe(true);
    expect(hostAllowed('evil.test', ['exämple.com'])).toBe(false);
  });
});

describe('link domains in the config file', () => {
  const yaml = (domains: string) => `organizations:\n  - id: acme\n    security:\n      link_domains: ${domains}\n`;

  it('a bad entry is a problem naming it; good ones load', () => {
    expect(() => parseConfigText(yaml('["example.com", "https://evil.test/x"]'), 'test.yaml', {})).toThrow(ConfigError);
    expect(() => parseConfigText(yaml('["example.com", "https://evil.test/x"]'), 'test.yaml', {})).toThrow(
      /organizations\/0\/security\/link_domains\/1: is "https:\/\/evil.test\/x", not a domain name/,
    );
    expect(
      parseConfigText(yaml('["*.example.com", "exämple.com"]'), 'test.yaml', {}).organizations[0]?.security?.link_domains,
    ).toEqual(['*.example.com', 'exämple.com']);
  });
});

describeDialects('link domains through the admin API on %s', (dialect, skip) => {
  let t!: TestApp;
  freshAppEach(dialect, skip, (app) => {
    t = app;
  });

  const linkDomains = async () =>
    (await admin(t, 'GET', '/organizations/acme')).json<{ security: { link_domains: string[] } }>().security.link_domains;

  it.skipIf(skip)('PUT and PATCH refuse an entry that is no domain name with a 400 naming it, and store nothing', async () => {
    const put = await admin(
      t,
      'PUT',
      '/organizations/acme',
      orgBody({ security: { link_domains: ['example.com', 'https://evil.test/x'] } }),
    );
    const err = expectError(put, 400, 'invalid_body');
    expect(err.details).toEqual({
      fields: [
        { field: 'security.link_domains.1', message: expect.stringMatching(/^is "https:\/\/evil.test\/x", not a domain name/) },
      ],
    });
    expect((await admin(t, 'GET', '/organizations/acme')).statusCode).toBe(404);

    expect(
      (await admin(t, 'PUT', '/organizations/acme', orgBody({ security: { link_domains: ['example.com'] } }))).statusCode,
    ).toBe(201);
    const patch = await admin(t, 'PATCH', '/organizations/acme', {
      security: { link_domains: ['example.com:8080', 'ok.test', 'javascript:alert(1)'] },
    });
    expect(expectError(patch, 400, 'invalid_body').details).toEqual({
      fields: [
        { field: 'security.link_domains.0', message: expect.any(String) },
        { field: 'security.link_domains.2', message: expect.any(String) },
      ],
    });
    expect(await linkDomains()).toEqual(['example.com']);
  });

  it.skipIf(skip)(
    'good entries are stored in one form: lower-cased A-labels, no wildcard or trailing dot, no repeats',
    async () => {
      const put = await admin(
        t,
        'PUT',
        '/organizations/acme',
        orgBody({ security: { link_domains: ['*.Example.com', 'exämple.com', 'example.org.', 'example.com'] } }),
      );
      expect(put.statusCode, put.body).toBe(201);
      expect(await linkDomains()).toEqual(['example.com', 'xn--exmple-cua.com', 'example.org']);
      // What GET shows, PUT takes back unchanged.
      const again = await admin(t, 'PATCH', '/organizations/acme', { security: { link_domains: await linkDomains() } });
      expect(again.statusCode, again.body).toBe(200);
    },
  );

  it.skipIf(skip)(
    'an entry stored before the rule does not block a PATCH of another setting; a new bad one still does',
    async () => {
      expect((await admin(t, 'PUT', '/organizations/acme', orgBody())).statusCode).toBe(201);
      const org = await t.store.organizations.get('acme');
      await t.store.organizations.update(
        'acme',
        { ...org!, security: { ...org!.security, link_domains: ['https://old.example.com/x'] } },
        t.clock.now(),
      );
      const rename = await admin(t, 'PATCH', '/organizations/acme', { name: 'Acme Inc' });
      expect(rename.statusCode, rename.body).toBe(200);
      expect(await linkDomains()).toEqual(['https://old.example.com/x']);
      const added = await admin(t, 'PATCH', '/organizations/acme', {
        security: { link_domains: ['https://old.example.com/x', 'https://new.example.com/'] },
      });
      expect(expectError(added, 400, 'invalid_body').details).toEqual({
        fields: [{ field: 'security.link_domains.1', message: expect.any(String) }],
      });
    },
  );

  it.skipIf(skip)('a template that enforces the allowlist sends a link to an IDN domain allowed as exämple.com', async () => {
    await seedOrg(t.store, {
      security: { link_domains: ['exämple.com'] },
      templates: [
        {
          id: 'links',
          subject: 'Hi',
          to: 'owner@acme.test',
          from_email: 'noreply@acme.test',
          enforce_link_allowlist: true,
          html: '<a href="https://www.exämple.com/x">x</a> <a href="{{url}}">y</a>',
          text: 'x',
        },
      ],
    });
    const ok = await send(
      t,
      { template_id: 'links', template_params: { url: 'https://xn--exmple-cua.com/y' } },
      bearer(PRIVATE_KEY),
    );
    expect(ok.statusCode, ok.body).toBe(202);
    const refused = await send(t, { template_id: 'links', template_params: { url: 'https://evil.test/' } }, bearer(PRIVATE_KEY));
    expect(expectError(refused, 403, 'link_not_allowed').details).toEqual({ hosts: ['evil.test'] });
  });
});
