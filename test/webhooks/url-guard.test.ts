import type { LookupAddress, LookupOptions } from 'node:dns';
import { describe, expect, it } from 'vitest';
import {
  checkEndpointUrl,
  endpointUrlRefusal,
  guardedLookup,
  isBlockedAddress,
  type LookupFn,
} from '../../src/webhooks/url-guard.js';
import type { WebhookUrlPolicy } from '../../src/webhooks/types.js';

const production: WebhookUrlPolicy = { production: true, allowPrivate: false };
const productionAllowPrivate: WebhookUrlPolicy = { production: true, allowPrivate: true };
const development: WebhookUrlPolicy = { production: false, allowPrivate: false };

/** A resolver answering from a table; a name not in it does not resolve. */
function fakeDns(table: Record<string, readonly string[]>): LookupFn {
  return async (hostname) => {
    const found = table[hostname];
    if (found === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return found.map((address): LookupAddress => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
}

const BLOCKED = [
  // loopback
  '127.0.0.1',
  '127.255.255.254',
  '::1',
  '0:0:0:0:0:0:0:1',
  // private
  '10.0.0.1',
  '10.255.255.255',
  '172.16.0.1',
  '172.31.255.255',
  '192.168.0.1',
  '192.168.255.255',
  'fc00::1',
  'fd12:3456::1',
  // link-local, cloud metadata
  '169.254.0.1',
  '169.254.169.254',
  'fe80::1',
  'fe80::1%eth0',
  'febf:ffff::1',
  'fd00:ec2::254',
  // unspecified, "this network"
  '0.0.0.0',
  '0.1.2.3',
  '::',
  '0:0:0:0:0:0:0:0',
  // CGNAT (Alibaba's metadata is 100.100.100.200)
  '100.64.0.1',
  '100.100.100.200',
  '100.127.255.255',
  // multicast, reserved, broadcast
  '224.0.0.1',
  '239.255.255.250',
  '240.0.0.1',
  '255.255.255.255',
  'ff02::1',
  'ff0e::1',
  // documentation, benchmarking, IETF, 6to4 relay
  '192.0.2.1',
  '198.51.100.1',
  '203.0.113.1',
  '198.18.0.1',
  '198.19.255.255',
  '192.0.0.192',
  '192.88.99.1',
  '2001:db8::1',
  // IPv4-mapped / translated / compatible IPv6 carrying a blocked IPv4
  '::ffff:127.0.0.1',
  '::ffff:7f00:1',
  '::FFFF:10.0.0.1',
  '::ffff:169.254.169.254',
  '::ffff:a9fe:a9fe',
  '::ffff:0:127.0.0.1',
  '::127.0.0.1',
  '::ffff:0.0.0.0',
  '::ffff:192.168.1.1',
  // NAT64 carrying a blocked IPv4, and local-use NAT64
  '64:ff9b::127.0.0.1',
  '64:ff9b::7f00:1',
  '64:ff9b::a9fe:a9fe',
  '64:ff9b::10.1.2.3',
  '64:ff9b:1::8.8.8.8',
  // 6to4 carrying a blocked IPv4
  '2002:7f00:1::',
  '2002:7f00:0001::1',
  '2002:a9fe:a9fe::1',
  '2002:c0a8:0101::1',
  '2002:0a00:0001:1:2:3:4:5',
  // Teredo whose client (inverted) is loopback: 127.0.0.1 ^ 0xff… = 80ff:fffe
  '2001:0:4136:e378:8000:63bf:80ff:fffe',
  // site-local (deprecated), discard
  'fec0::1',
  '100::1',
  // not an address at all: fail closed
  'localhost',
  '',
  'example.com',
  '1.2.3',
  '::ffff:999.0.0.1',
];

const ALLOWED = [
  '8.8.8.8',
  '1.1.1.1',
  '93.184.215.14',
  '172.15.255.255',
  '172.32.0.1',
  '100.63.255.255',
  '100.128.0.1',
  '169.253.255.255',
  '192.167.255.255',
  '192.169.0.1',
  '223.255.255.255',
  '11.0.0.1',
  '126.255.255.255',
  '128.0.0.1',
  '2606:4700:4700::1111',
  '2001:4860:4860::8888',
  '::ffff:8.8.8.8',
  '::ffff:808:808',
  '64:ff9b::8.8.8.8',
  '2002:0808:0808::1',
  '2a00:1450:4001:80b::200e',
];

describe('isBlockedAddress', () => {
  it.each(BLOCKED)('blocks %s', (ip) => {
    expect(isBlockedAddress(ip)).toBe(true);
  });
  it.each(ALLOWED)('allows the public %s', (ip) => {
    expect(isBlockedAddress(ip)).toBe(false);
  });
});

describe('checkEndpointUrl: refused under every policy', () => {
  const policies = [production, productionAllowPrivate, development];
  const bad = [
    'javascript:alert(1)',
    'file:///etc/passwd',
    'ftp://example.com/hook',
    'data:text/plain,hello',
    'gopher://example.com/',
    'ws://example.com/',
    'example.com/hook',
    '/hooks',
    '',
    'https://',
    'http://:80/',
  ];
  it.each(bad)('refuses %s', async (url) => {
    for (const policy of policies) {
      const why = await checkEndpointUrl(url, policy, fakeDns({}));
      expect(why).toMatch(/url/);
    }
  });

  it('refuses a user name or password in the URL', async () => {
    for (const policy of policies) {
      expect(await checkEndpointUrl('https://user:pass@example.com/hook', policy, fakeDns({ 'example.com': ['8.8.8.8'] }))).toBe(
        'url must not contain a user name or password',
      );
      expect(await checkEndpointUrl('http://user@127.0.0.1/hook', policy, fakeDns({}))).toBe(
        'url must not contain a user name or password',
      );
    }
  });

  it('refuses URLs over 2048 characters', async () => {
    const url = `https://example.com/${'a'.repeat(2049 - 'https://example.com/'.length)}`;
    expect(url).toHaveLength(2049);
    expect(await checkEndpointUrl(url, development)).toMatch(/2048/);
    expect(await checkEndpointUrl(url.slice(0, 2048), development)).toBeNull();
  });
});

describe('checkEndpointUrl in production', () => {
  const dns = fakeDns({
    'hooks.example.com': ['93.184.215.14', '2606:2800:220:1:248:1893:25c8:1946'],
    'evil.example.com': ['93.184.215.14', '127.0.0.1'],
    'internal.example.com': ['10.0.0.1'],
    'v6-private.example.com': ['fd00::1'],
    'mapped.example.com': ['::ffff:127.0.0.1'],
    'metadata.example.com': ['169.254.169.254'],
  });

  it('accepts https to a name that resolves only to public addresses', async () => {
    expect(await checkEndpointUrl('https://hooks.example.com/mailroom?x=1', production, dns)).toBeNull();
    expect(await checkEndpointUrl('https://93.184.215.14:8443/hook', production, dns)).toBeNull();
    expect(await checkEndpointUrl('https://[2606:4700:4700::1111]/hook', production, dns)).toBeNull();
  });

  it('refuses http', async () => {
    expect(await checkEndpointUrl('http://hooks.example.com/', production, dns)).toBe('url must use https in production');
  });

  it.each(BLOCKED.filter((ip) => ip.includes('.') && !/[a-z]{3}/.test(ip) && ip.split('.').length === 4 && !ip.includes(':')))(
    'refuses the IPv4 literal %s',
    async (ip) => {
      expect(await checkEndpointUrl(`https://${ip}/hook`, production, dns)).toMatch(/blocked address/);
    },
  );

  it.each(BLOCKED.filter((ip) => ip.includes(':') && !ip.includes('%') && !ip.includes('999')))(
    'refuses the IPv6 literal [%s]',
    async (ip) => {
      expect(await checkEndpointUrl(`https://[${ip}]/hook`, production, dns)).toMatch(/blocked address/);
    },
  );

  it('refuses the other spellings of loopback the URL parser normalizes (decimal, hex, octal, short)', async () => {
    for (const host of ['2130706433', '0x7f000001', '0177.0.0.1', '127.1', '0x7f.1', '0', '0x0', '017700000001']) {
      expect(await checkEndpointUrl(`https://${host}/hook`, production, dns)).toMatch(/blocked address/);
    }
  });

  it('refuses a name when any of its addresses is blocked', async () => {
    expect(await checkEndpointUrl('https://evil.example.com/', production, dns)).toMatch(
      /resolves to 127\.0\.0\.1.*blocked address/,
    );
    expect(await checkEndpointUrl('https://internal.example.com/', production, dns)).toMatch(/10\.0\.0\.1/);
    expect(await checkEndpointUrl('https://v6-private.example.com/', production, dns)).toMatch(/fd00::1/);
    expect(await checkEndpointUrl('https://mapped.example.com/', production, dns)).toMatch(/blocked address/);
    expect(await checkEndpointUrl('https://metadata.example.com/', production, dns)).toMatch(/169\.254\.169\.254/);
  });

  it('refuses local names outright, without asking DNS', async () => {
    const everythingPublic: LookupFn = async () => [{ address: '8.8.8.8', family: 4 }];
    for (const host of [
      'localhost',
      'LOCALHOST',
      'localhost.',
      'api.localhost',
      'a.b.localhost.',
      'metadata.google.internal',
      'metadata',
    ]) {
      expect(await checkEndpointUrl(`https://${host}/hook`, production, everythingPublic)).toMatch(/is local/);
    }
  });

  it('refuses a name that does not resolve', async () => {
    expect(await checkEndpointUrl('https://nowhere.example.com/', production, dns)).toBe(
      'url host nowhere.example.com does not resolve',
    );
    expect(await checkEndpointUrl('https://nowhere.example.com/', production, async () => [])).toMatch(/does not resolve/);
  });

  it('lets private and loopback receivers through with MAILROOM_WEBHOOK_ALLOW_PRIVATE=true', async () => {
    expect(await checkEndpointUrl('https://127.0.0.1:8443/hook', productionAllowPrivate, dns)).toBeNull();
    expect(await checkEndpointUrl('http://127.0.0.1:8080/hook', productionAllowPrivate, dns)).toBeNull();
    expect(await checkEndpointUrl('https://internal.example.com/', productionAllowPrivate, dns)).toBeNull();
    expect(await checkEndpointUrl('https://localhost/', productionAllowPrivate, dns)).toBeNull();
    expect(await checkEndpointUrl('http://localhost:8080/', productionAllowPrivate, dns)).toBeNull();
    expect(await checkEndpointUrl('http://internal.example.com/', productionAllowPrivate, dns)).toBeNull();
  });

  it('keeps https required for public addresses with MAILROOM_WEBHOOK_ALLOW_PRIVATE=true', async () => {
    expect(await checkEndpointUrl('https://hooks.example.com/', productionAllowPrivate, dns)).toBeNull();
    expect(await checkEndpointUrl('http://hooks.example.com/', productionAllowPrivate, dns)).toMatch(
      /^url must use https in production: hooks\.example\.com resolves to the public address 93\.184\.215\.14/,
    );
    // One public address among private ones is enough to need https.
    expect(await checkEndpointUrl('http://evil.example.com/', productionAllowPrivate, dns)).toMatch(/must use https/);
    expect(await checkEndpointUrl('http://8.8.8.8/', productionAllowPrivate, dns)).toMatch(
      /^url must use https in production: 8\.8\.8\.8 is a public address/,
    );
    expect(await checkEndpointUrl('http://nowhere.example.com/', productionAllowPrivate, dns)).toMatch(/does not resolve/);
  });

  it('marks a name that does not resolve as unresolved (the config file only warns about it), and nothing else', async () => {
    expect(await endpointUrlRefusal('https://nowhere.example.com/', production, dns)).toEqual({
      reason: 'url host nowhere.example.com does not resolve',
      unresolved: true,
    });
    expect(await endpointUrlRefusal('https://internal.example.com/', production, dns)).toMatchObject({ unresolved: false });
    expect(await endpointUrlRefusal('http://hooks.example.com/', production, dns)).toMatchObject({ unresolved: false });
    expect(await endpointUrlRefusal('https://hooks.example.com/', production, dns)).toBeNull();
  });
});

describe('checkEndpointUrl outside production', () => {
  it('lets http and https to loopback receivers through, without resolving', async () => {
    const noDns: LookupFn = async () => {
      throw new Error('must not resolve');
    };
    for (const url of ['http://127.0.0.1:3000/hook', 'https://127.0.0.1/hook', 'http://localhost:8080/', 'http://[::1]:9000/']) {
      expect(await checkEndpointUrl(url, development, noDns)).toBeNull();
    }
  });

  it('refuses private, link-local and metadata addresses (issue 25: only http and loopback are relaxed)', async () => {
    for (const url of ['http://10.0.0.1/', 'http://169.254.169.254/latest/meta-data', 'http://[fe80::1]/']) {
      expect(await checkEndpointUrl(url, development, fakeDns({}))).toMatch(/blocked address.*in development too/);
    }
  });
});

/** Calls the node-style lookup and returns what its callback got. */
function callLookup(
  lookup: ReturnType<typeof guardedLookup>,
  hostname: string,
  options: LookupOptions,
): Promise<{ error: NodeJS.ErrnoException | null; address: string | LookupAddress[]; family: number | undefined }> {
  return new Promise((resolve) => {
    lookup(hostname, options, (error, address, family) => resolve({ error, address, family }));
  });
}

describe('guardedLookup (the connection-time check)', () => {
  const dns = fakeDns({
    'public.example.com': ['93.184.215.14', '2606:2800:220:1:248:1893:25c8:1946'],
    'rebound.example.com': ['127.0.0.1'],
    'mixed.example.com': ['93.184.215.14', '10.0.0.1'],
    'mapped.example.com': ['::ffff:169.254.169.254'],
  });

  it('answers a public name, one address or all of them, honouring family', async () => {
    const lookup = guardedLookup(production, dns);
    expect(await callLookup(lookup, 'public.example.com', {})).toEqual({ error: null, address: '93.184.215.14', family: 4 });
    expect(await callLookup(lookup, 'public.example.com', { all: true })).toEqual({
      error: null,
      address: [
        { address: '93.184.215.14', family: 4 },
        { address: '2606:2800:220:1:248:1893:25c8:1946', family: 6 },
      ],
      family: undefined,
    });
    expect(await callLookup(lookup, 'public.example.com', { family: 6 })).toEqual({
      error: null,
      address: '2606:2800:220:1:248:1893:25c8:1946',
      family: 6,
    });
  });

  it('refuses a blocked answer in production, with all true and false', async () => {
    const lookup = guardedLookup(production, dns);
    for (const all of [true, false]) {
      for (const host of ['rebound.example.com', 'mixed.example.com', 'mapped.example.com']) {
        const { error } = await callLookup(lookup, host, { all });
        expect(error?.message).toMatch(/blocked address/);
      }
    }
  });

  it('with MAILROOM_WEBHOOK_ALLOW_PRIVATE=true, lets http reach only private answers', async () => {
    const lookup = guardedLookup(productionAllowPrivate, dns, 'http:');
    expect(await callLookup(lookup, 'rebound.example.com', {})).toEqual({ error: null, address: '127.0.0.1', family: 4 });
    for (const host of ['public.example.com', 'mixed.example.com']) {
      const { error } = await callLookup(lookup, host, { all: true });
      expect(error?.message).toMatch(/public address over http/);
    }
  });

  it('in development, passes loopback answers and refuses other blocked ones', async () => {
    const lookup = guardedLookup(development, dns, 'http:');
    expect(await callLookup(lookup, 'rebound.example.com', {})).toEqual({ error: null, address: '127.0.0.1', family: 4 });
    for (const host of ['mixed.example.com', 'mapped.example.com']) {
      expect((await callLookup(lookup, host, { all: true })).error?.message).toMatch(/blocked address/);
    }
  });

  it('passes blocked answers through when the policy allows them', async () => {
    for (const policy of [{ production: false, allowPrivate: true }, productionAllowPrivate]) {
      const lookup = guardedLookup(policy, dns);
      expect(await callLookup(lookup, 'rebound.example.com', {})).toEqual({ error: null, address: '127.0.0.1', family: 4 });
      expect(await callLookup(lookup, 'mixed.example.com', { all: true })).toMatchObject({ error: null, address: [{}, {}] });
    }
  });

  it('reports a name that does not resolve as an error', async () => {
    const { error } = await callLookup(guardedLookup(production, dns), 'nowhere.example.com', { all: true });
    expect(error?.code).toBe('ENOTFOUND');
    const v6only = await callLookup(guardedLookup(production, dns), 'rebound.example.com', { family: 6 });
    expect(v6only.error?.code).toBe('ENOTFOUND');
  });
});
