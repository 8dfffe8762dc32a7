import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/env.js';
import { ManualClock } from '../../src/domain/clock.js';
import { AnomalyDetector } from '../../src/protection/anomaly.js';
import { ipBucket } from '../../src/protection/client-ip.js';
import { analyseTemplate, checkLockedContent, checkTemplateLock } from '../../src/protection/dynamic-lock.js';
import { headlessSign } from '../../src/protection/headless.js';
import { checkLinks, hostAllowed, linkHosts } from '../../src/protection/links.js';
import { MemoryLimiterStore } from '../../src/protection/store.js';
import { ApiError } from '../../src/errors/api-error.js';
import type { TemplateContent } from '../../src/domain/types.js';

function thrown(fn: () => void): ApiError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error('expected an ApiError');
}

describe('ipBucket: the unit of the per-IP limit', () => {
  it('keeps IPv4 addresses whole', () => {
    expect(ipBucket('203.0.113.7')).toBe('203.0.113.7');
    expect(ipBucket('203.0.113.8')).not.toBe(ipBucket('203.0.113.7'));
  });

  it('groups IPv6 addresses by /64, whatever their spelling', () => {
    const a = ipBucket('2001:db8:1:2::1');
    expect(a).toBe('2001:db8:1:2::/64');
    expect(ipBucket('2001:0db8:0001:0002:ffff:ffff:ffff:ffff')).toBe(a);
    expect(ipBucket('2001:DB8:1:2:a:b:c:d')).toBe(a);
    expect(ipBucket('[2001:db8:1:2::9]')).toBe(a);
    expect(ipBucket('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
    expect(ipBucket('2001:db8:1:3::1')).not.toBe(a);
    expect(ipBucket('::1')).toBe('0:0:0:0::/64');
    expect(ipBucket('64:ff9b::192.0.2.1')).toBe('64:ff9b:0:0::/64');
  });

  it('counts IPv4-mapped IPv6 as the IPv4 address', () => {
    expect(ipBucket('::ffff:192.0.2.1')).toBe('192.0.2.1');
    expect(ipBucket('::ffff:c000:0201')).toBe('192.0.2.1');
  });
});

describe('headlessSign', () => {
  const real = [
    'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
    'Mozilla/5.0 (Macintosh; Intel Mac OS X 14.4; rv:125.0) Gecko/20100101 Firefox/125.0',
    'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_4) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15',
    'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) ' +
      'AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1',
    'okhttp/4.12.0',
  ];
  it.each(real)('lets a normal client pass: %s', (ua) => {
    expect(
      headlessSign({ userAgent: ua, secChUa: '"Chromium";v="124", "Google Chrome";v="124", "Not-A.Brand";v="99"' }),
    ).toBeUndefined();
  });

  it('passes a request without User-Agent (apps may send none)', () => {
    expect(headlessSign({ userAgent: undefined, secChUa: undefined })).toBeUndefined();
  });

  it.each([
    [
      'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/124.0.6367.60 Safari/537.36',
      'headless_chrome',
    ],
    ['Mozilla/5.0 (Unknown; Linux x86_64) AppleWebKit/538.1 (KHTML, like Gecko) PhantomJS/2.1.1 Safari/538.1', 'phantomjs'],
    ['Playwright/1.44.0 (x64; ubuntu 22.04) node/20.12', 'playwright'],
    ['Mozilla/5.0 Puppeteer', 'puppeteer'],
    ['Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) jsdom/24.0.0', 'jsdom'],
    ['Mozilla/5.0 (compatible; SlimerJS/1.0)', 'slimerjs'],
    ['HtmlUnit/2.70', 'htmlunit'],
  ])('spots %s', (ua, sign) => {
    expect(headlessSign({ userAgent: ua, secChUa: undefined })).toBe(sign);
  });

  it('spots HeadlessChrome in the Sec-CH-UA client hint behind a normal user agent', () => {
    expect(
      headlessSign({
        userAgent:
          'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
        secChUa: '"Chromium";v="124", "HeadlessChrome";v="124", "Not-A.Brand";v="99"',
      }),
    ).toBe('headless_client_hint');
  });
});

describe('links in the rendered email', () => {
  it('finds href, src, action, srcset, CSS url(), meta refresh and bare URLs, entities decoded', () => {
    const html = `<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Transitional//EN"
      "http://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional.dtd">
      <html xmlns="http://www.w3.org/1999/xhtml"><head><meta http-equiv="refresh" content="0; url=https://refresh.test/x">
      <style>.a { background: url('https://css.test/bg.png') }</style></head>
      <body><a HREF="https://A.Example.com/path?q=1">a</a><img src="//cdn.test/i.png">
      <form action="https://form.test/post"></form>
      <img srcset="https://s1.test/a.png 1x, https://s2.test/b.png 2x">
      <div style="background-image:url(https://inline.test/x.png)"></div>
      <a href="https&#58;//entity.test/">e</a><a href="/relative">r</a><a href="mailto:x@mail.test">m</a>
      <p>Visit https://text.test/page, or www.www-host.test.</p>
      <!--[if mso]><v:rect href="https://mso.test/"></v:rect><![endif]-->
      <!-- https://plain-comment.test/ is not rendered --></body></html>`;
    expect(linkHosts({ html, text: 'Also http://plain.test/x and HTTPS://CAPS.TEST.' })).toEqual([
      'a.example.com',
      'caps.test',
      'cdn.test',
      'css.test',
      'entity.test',
      'form.test',
      'inline.test',
      'mso.test',
      'plain.test',
      'refresh.test',
      's1.test',
      's2.test',
      'text.test',
      'www.www-host.test',
    ]);
  });

  it('reads backslash and whitespace tricks the way browsers do', () => {
    expect(linkHosts({ html: '<a href=" https:\\\\evil.test\\x ">x</a><a href="/\\evil2.test">y</a>', text: '' })).toEqual([
      'evil.test',
      'evil2.test',
    ]);
  });

  it('matches a domain and its subdomains only', () => {
    expect(hostAllowed('acme.test', ['acme.test'])).toBe(true);
    expect(hostAllowed('www.acme.test', ['acme.test'])).toBe(true);
    expect(hostAllowed('a.b.acme.test', ['*.acme.test'])).toBe(true);
    expect(hostAllowed('evilacme.test', ['acme.test'])).toBe(false);
    expect(hostAllowed('acme.test.evil.test', ['acme.test'])).toBe(false);
    expect(hostAllowed('acme.test', [])).toBe(false);
  });

  it('link_not_allowed names the hosts, never the URLs', () => {
    const err = thrown(() =>
      checkLinks(
        {
          html: '<a href="https://evil.test/reset?token=SECRET">x</a><a href="https://ok.acme.test/">y</a>',
          text: 'https://other.test/?email=victim@example.com',
        },
        ['acme.test'],
      ),
    );
    expect(err.code).toBe('link_not_allowed');
    expect(err.details).toEqual({ hosts: ['evil.test', 'other.test'] });
    expect(JSON.stringify(err.details)).not.toContain('SECRET');
  });
});

describe('template shape and the dynamic-recipient lock', () => {
  const base: TemplateContent = {
    subject: 's',
    to: 'owner@acme.test',
    cc: '',
    bcc: '',
    from_name: '',
    from_email: 'noreply@acme.test',
    reply_to: '',
    html: '<p>{{message}}</p>',
    text: '{{message}}',
  };

  it('sees parameters in recipient and sender fields, not comments or plain text', () => {
    expect(analyseTemplate(base)).toEqual({ dynamicRecipients: [], dynamicSenders: [], rawParams: new Set() });
    const s = analyseTemplate({
      ...base,
      to: '{{!-- fixed --}}owner@acme.test',
      cc: '{{email}}',
      bcc: '{{#if copy}}audit@acme.test{{/if}}',
      from_name: '{{name}}',
      reply_to: '{{email}}',
    });
    expect(s.dynamicRecipients).toEqual(['cc', 'bcc']);
    expect(s.dynamicSenders).toEqual(['from_name', 'reply_to']);
  });

  it('finds the parameters the HTML inserts unescaped, through blocks and helpers', () => {
    const raw = (html: string) => analyseTemplate({ ...base, html }).rawParams;
    expect(raw('{{{a}}} {{& b}} {{c}}')).toEqual(new Set(['a', 'b']));
    expect(raw('{{#if x}}{{{d.e}}}{{/if}}')).toEqual(new Set(['d']));
    expect(raw('{{#each items}}{{{this.name}}}{{{../top}}}{{/each}}')).toEqual(new Set(['items', 'top']));
    expect(raw('{{#with obj}}{{{inner}}}{{/with}}')).toEqual(new Set(['obj']));
    expect(raw('{{{lookup map key}}}')).toEqual(new Set(['map', 'key']));
    expect(raw('{{{@root.z}}}')).toEqual(new Set(['z']));
    expect(raw('{{{this}}}')).toBe('all');
  });

  const shape = (t: Partial<TemplateContent>) => analyseTemplate({ ...base, ...t });
  const flags = { allow_dynamic_recipients: true, captcha: true };

  it('refuses dynamic recipients the template does not allow, for every key', () => {
    for (const key of ['public', 'private'] as const) {
      expect(
        thrown(() => checkTemplateLock({ ...flags, allow_dynamic_recipients: false }, shape({ to: '{{email}}' }), key)).code,
      ).toBe('dynamic_recipient_not_allowed');
    }
  });

  it('requires CAPTCHA for public keys only', () => {
    expect(thrown(() => checkTemplateLock({ ...flags, captcha: false }, shape({ to: '{{email}}' }), 'public')).code).toBe(
      'dynamic_recipient_requires_captcha',
    );
    expect(() => checkTemplateLock({ ...flags, captcha: false }, shape({ to: '{{email}}' }), 'private')).not.toThrow();
  });

  it('a public key never takes From from parameters; From name and Reply-To only without a dynamic recipient', () => {
    const err = thrown(() => checkTemplateLock(flags, shape({ from_email: '{{sender}}' }), 'public'));
    expect(err.code).toBe('dynamic_field_not_allowed');
    expect(err.details).toEqual({ fields: ['from_email'] });
    expect(() => checkTemplateLock(flags, shape({ from_name: '{{name}}', reply_to: '{{email}}' }), 'public')).not.toThrow();
    const locked = thrown(() =>
      checkTemplateLock(flags, shape({ to: '{{email}}', from_name: '{{name}}', reply_to: '{{email}}' }), 'public'),
    );
    expect(locked.details).toEqual({ fields: ['from_name', 'reply_to'] });
    expect(() =>
      checkTemplateLock(flags, shape({ to: '{{email}}', from_email: '{{sender}}', from_name: '{{name}}' }), 'private'),
    ).not.toThrow();
  });

  it('content lock: HTML parameters, raw insertions and values over 500 characters', () => {
    const s = shape({ to: '{{email}}', html: '<p>{{message}}</p>{{{note}}}' });
    const specs = [
      { name: 'bio', type: 'html' as const },
      { name: 'message', type: 'string' as const },
    ];
    expect(() => checkLockedContent({ message: 'x'.repeat(500), bio: '', note: null }, specs, s)).not.toThrow();
    const err = thrown(() =>
      checkLockedContent({ message: 'x'.repeat(501), bio: '<b>hi</b>', note: 'n', list: { deep: ['y'.repeat(600)] } }, specs, s),
    );
    expect(err.code).toBe('invalid_template_params');
    expect(err.status).toBe(422);
    expect(err.details?.reason).toBe('content_locked');
    expect((err.details?.issues as Array<{ param: string }> | undefined)?.map((i) => i.param)).toEqual([
      'message',
      'bio',
      'note',
      'list',
    ]);
  });
});

describe('MemoryLimiterStore', () => {
  it('consumes all or nothing and reports the first full counter', async () => {
    const clock = new ManualClock();
    const store = new MemoryLimiterStore(clock);
    const a = { key: 'a', limit: 2, ttlMs: 1000 };
    const b = { key: 'b', limit: 1, ttlMs: 1000 };
    expect(await store.consume([a, b])).toBe(-1);
    expect(await store.consume([a, b])).toBe(1);
    // The refused call did not count on `a`.
    expect(await store.consume([a])).toBe(-1);
    expect(await store.consume([a])).toBe(0);
    clock.advance(1000);
    expect(await store.consume([a, b])).toBe(-1);
    await store.release(['b']);
    expect(await store.consume([b])).toBe(-1);
  });

  it('claims once until the claim expires on the clock', async () => {
    const clock = new ManualClock();
    const store = new MemoryLimiterStore(clock);
    expect(await store.claim('t', 300_000)).toBe(true);
    expect(await store.claim('t', 300_000)).toBe(false);
    clock.advance(299_999);
    expect(await store.claim('t', 300_000)).toBe(false);
    clock.advance(1);
    expect(await store.claim('t', 300_000)).toBe(true);
    await store.unclaim('t');
    expect(await store.claim('t', 300_000)).toBe(true);
  });
});

describe('AnomalyDetector', () => {
  const settings = { enabled: true, minRequests: 5, factor: 3, cooldownMs: 20_000 };

  it('a spike over the floor of a quiet organization slows it until the cool-down after the spike', async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1, 12, 0, 0));
    const store = new MemoryLimiterStore(clock);
    const d = new AnomalyDetector(settings);
    for (let i = 1; i <= 4; i++) expect((await d.observe(store, 'o', clock.now())).slowed).toBe(false);
    const spike = await d.observe(store, 'o', clock.now());
    expect(spike).toEqual({ slowed: true, count: 5, threshold: 5 });
    clock.advance(10_000); // a quiet window: still slowed (cool-down runs from the spike window's end)
    expect((await d.observe(store, 'o', clock.now())).slowed).toBe(true);
    clock.advance(19_999);
    expect((await d.observe(store, 'o', clock.now())).slowed).toBe(true);
    clock.advance(1);
    expect((await d.observe(store, 'o', clock.now())).slowed).toBe(false);
  });

  it('the threshold follows the trailing 10-minute baseline of admitted requests', async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1, 12, 0, 0));
    const store = new MemoryLimiterStore(clock);
    const d = new AnomalyDetector(settings);
    // 60 admitted requests per minute for 10 minutes: 10 per 10 s on average.
    for (let m = 0; m < 10; m++) {
      const baseline = d.counters('o', clock.now(), { slowed: false, count: 0, threshold: 0 }).baseline;
      for (let i = 0; i < 60; i++) await store.consume([baseline]);
      clock.advance(60_000);
    }
    let last = { slowed: false, count: 0, threshold: 0 };
    for (let i = 0; i < 30; i++) last = await d.observe(store, 'o', clock.now());
    expect(last).toEqual({ slowed: false, count: 30, threshold: 31 });
    expect((await d.observe(store, 'o', clock.now())).slowed).toBe(true);
  });
});

describe('configuration', () => {
  it('reads the protection variables with their defaults', () => {
    const c = loadConfig({});
    expect(c.turnstile.timeoutMs).toBe(5000);
    expect(c.limits).toEqual({
      floodPerSecond: 50,
      backendTimeoutMs: 1000,
      anomaly: { enabled: true, minRequests: 50, factor: 10, cooldownMs: 60_000 },
    });
    const d = loadConfig({
      MAILROOM_TURNSTILE_TIMEOUT_MS: '800',
      MAILROOM_FLOOD_GUARD_PER_SECOND: '120',
      MAILROOM_RATE_LIMIT_TIMEOUT_MS: '250',
      MAILROOM_ANOMALY_DETECTION: 'off',
      MAILROOM_ANOMALY_MIN_REQUESTS: '7',
      MAILROOM_ANOMALY_FACTOR: '4',
      MAILROOM_ANOMALY_COOLDOWN_SECONDS: '30',
    });
    expect(d.turnstile.timeoutMs).toBe(800);
    expect(d.limits).toEqual({
      floodPerSecond: 120,
      backendTimeoutMs: 250,
      anomaly: { enabled: false, minRequests: 7, factor: 4, cooldownMs: 30_000 },
    });
  });

  it('refuses a flood guard under the 50 per second of the spec', () => {
    expect(() => loadConfig({ MAILROOM_FLOOD_GUARD_PER_SECOND: '10' })).toThrow(/MAILROOM_FLOOD_GUARD_PER_SECOND/);
  });
});
