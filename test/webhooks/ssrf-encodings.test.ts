import type { LookupAddress } from 'node:dns';
import { createServer, type AddressInfo, type Server } from 'node:net';
import os from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { createWebhookHttp } from '../../src/webhooks/http-post.js';
import type { WebhookHttp, WebhookUrlPolicy } from '../../src/webhooks/types.js';
import { admin, createOrg } from '../support/admin.js';
import { freshAppEach, type TestApp } from '../support/app.js';
import { expectError } from '../support/http.js';
import { insertQueued } from '../support/delivery.js';
import { insertEndpoint, testDispatcher, useWebhookStore } from '../support/webhooks/dispatch.js';
import { testSecret } from '../support/webhooks/receiver.js';
import { isLoopbackHost } from '../../src/net/loopback.js';
import { isBlockedAddress } from '../../src/webhooks/blocked-addresses.js';
import { endpointUrlRefusal, type LookupFn } from '../../src/webhooks/url-guard.js';
import { describeDialects } from '../support/dialects.js';

/**
 * The attacker's side of the webhook URL guard (issue 25 §7): every spelling of the cloud metadata
 * service, link-local and private addresses, and names that resolve to them, refused in
 * development (what `npm start` runs) as in production, at registration and at delivery. Before
 * the fix, development skipped the address check and posted to http://169.254.169.254/.
 */

const development: WebhookUrlPolicy = { production: false, allowPrivate: false };
const production: WebhookUrlPolicy = { production: true, allowPrivate: false };
const MODES = [
  ['development', development],
  ['production', production],
] as const;

/** Hosts the URL parser turns into a refused address (what it becomes, for the reader). */
const LITERALS = [
  '169.254.169.254', // AWS, GCP, Azure, OpenStack metadata
  '2852039166', // decimal 169.254.169.254
  '0xA9FEA9FE', // hex
  '0xa9.0xfe.0xa9.0xfe', // hex per byte
  '0251.0376.0251.0376', // octal
  '025177524776', // octal, whole
  '169.254.43518', // short form a.b.c16
  '[::ffff:169.254.169.254]', // IPv4-mapped IPv6
  '[::ffff:a9fe:a9fe]', // the same in hex
  '[64:ff9b::a9fe:a9fe]', // NAT64
  '[2002:a9fe:a9fe::1]', // 6to4 carrying it
  '[fe80::1]', // IPv6 link-local
  '[fd00:ec2::254]', // AWS's IPv6 metadata
  '100.100.100.200', // Alibaba's metadata (CGNAT)
  '10.0.0.1',
  '172.16.0.1',
  '192.168.1.1',
  '[fd12:3456::1]', // private: refused in development too
  '0.0.0.0',
  '[::]', // unspecified
];

/** Names that resolve to what the metadata service answers on (DNS under the attacker's control). */
const DNS: Record<string, readonly string[]> = {
  'meta.attacker.example': ['169.254.169.254'],
  'meta6.attacker.example': ['fd00:ec2::254'],
  'mapped.attacker.example': ['::ffff:169.254.169.254'],
  'linklocal.attacker.example': ['fe80::1'],
  'lan.attacker.example': ['192.168.1.1'],
  'mixed.attacker.example': ['93.184.215.14', '169.254.169.254'],
  'public.example.com': ['93.184.215.14'],
};

const fakeDns =
  (table: Record<string, readonly string[]>): LookupFn =>
  async (hostname) => {
    const found = table[hostname];
    if (found === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return found.map((address): LookupAddress => ({ address, family: address.includes(':') ? 6 : 4 }));
  };

const scheme = (policy: WebhookUrlPolicy): string => (policy.production ? 'https' : 'http');

const clients: WebhookHttp[] = [];
const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await Promise.all(servers.splice(0).map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
});

function client(policy: WebhookUrlPolicy, lookup?: LookupFn): WebhookHttp {
  const http = createWebhookHttp({ policy, timeoutMs: 2_000, ...(lookup === undefined ? {} : { lookup }) });
  clients.push(http);
  return http;
}

describe.each(MODES)('registration in %s', (_mode, policy) => {
  const dns = fakeDns(DNS);

  it.each(LITERALS)('refuses the host %s', async (host) => {
    const refusal = await endpointUrlRefusal(`${scheme(policy)}://${host}/latest/meta-data`, policy, dns);
    expect(refusal?.reason).toMatch(/blocked address/);
  });

  it.each(['metadata', 'metadata.google.internal', 'METADATA.google.internal.', 'instance-data.ec2.internal'])(
    'refuses the metadata name %s without asking DNS',
    async (host) => {
      const everythingPublic: LookupFn = async () => [{ address: '93.184.215.14', family: 4 }];
      expect(
        (await endpointUrlRefusal(`${scheme(policy)}://${host}/computeMetadata/v1/`, policy, everythingPublic))?.reason,
      ).toMatch(/is local/);
    },
  );

  it.each(Object.keys(DNS).filter((h) => h.includes('attacker')))(
    'refuses %s, a name resolving to a refused address',
    async (host) => {
      const refusal = await endpointUrlRefusal(`${scheme(policy)}://${host}/`, policy, dns);
      expect(refusal?.reason).toMatch(new RegExp(`${host.replaceAll('.', '\\.')} resolves to .*blocked address`));
    },
  );

  it('accepts a public receiver', async () => {
    expect(await endpointUrlRefusal(`${scheme(policy)}://public.example.com/hook`, policy, dns)).toBeNull();
  });
});

describe('development keeps http and loopback, nothing more', () => {
  it('accepts http, and loopback in every spelling', async () => {
    const noDns: LookupFn = async () => {
      throw new Error('must not resolve');
    };
    for (const url of [
      'http://127.0.0.1:3000/hook',
      'https://127.0.0.1/hook',
      'http://localhost:8080/',
      'http://api.localhost/',
      'http://[::1]:9000/',
      'http://[::ffff:127.0.0.1]/',
      'http://2130706433/',
      'http://93.184.215.14/',
    ]) {
      expect(await endpointUrlRefusal(url, development, noDns), url).toBeNull();
    }
    expect(await endpointUrlRefusal('http://public.example.com/', development, fakeDns(DNS))).toBeNull();
    expect(
      await endpointUrlRefusal('http://loop.example.com/', development, fakeDns({ 'loop.example.com': ['127.0.0.1', '::1'] })),
    ).toBeNull();
  });

  it('accepts a name that does not resolve yet (each connection is checked), unlike production', async () => {
    expect(await endpointUrlRefusal('http://receiver.test/', development, fakeDns({}))).toBeNull();
    expect(await endpointUrlRefusal('https://receiver.test/', production, fakeDns({}))).toMatchObject({ unresolved: true });
  });

  it('MAILROOM_WEBHOOK_ALLOW_PRIVATE=true opens the rest', async () => {
    const open: WebhookUrlPolicy = { production: false, allowPrivate: true };
    for (const host of ['169.254.169.254', '10.0.0.1', 'metadata.google.internal', '[fe80::1]']) {
      expect(await endpointUrlRefusal(`http://${host}/`, open, fakeDns({}))).toBeNull();
    }
  });
});

describe.each(MODES)('delivery in %s', (_mode, policy) => {
  it.each(LITERALS)('refuses to post to the host %s', async (host) => {
    const result = await client(policy).post(`${scheme(policy)}://${host}/latest/meta-data`, {}, '{}');
    expect(result).toMatchObject({ status: null, body: null, error: expect.stringMatching(/blocked address/) });
  });

  it.each(Object.keys(DNS).filter((h) => h.includes('attacker')))('refuses %s at connection time', async (host) => {
    const result = await client(policy, fakeDns(DNS)).post(`${scheme(policy)}://${host}/latest/meta-data`, {}, '{}');
    expect(result).toMatchObject({ status: null, error: expect.stringMatching(/blocked address/) });
  });

  it('catches DNS rebinding: public at registration, the metadata address at delivery', async () => {
    const url = `${scheme(policy)}://rebind.attacker.example/latest/meta-data`;
    expect(await endpointUrlRefusal(url, policy, fakeDns({ 'rebind.attacker.example': ['93.184.215.14'] }))).toBeNull();
    const result = await client(policy, fakeDns({ 'rebind.attacker.example': ['169.254.169.254'] })).post(url, {}, '{}');
    expect(result).toMatchObject({
      status: null,
      error: expect.stringMatching(/blocked address: rebind\.attacker\.example resolves to 169\.254\.169\.254/),
    });
  });
});

/** A non-loopback address of this machine that the guard refuses (a private or documentation range), if it has one. */
const privateLocal = Object.values(os.networkInterfaces())
  .flat()
  .find(
    (a) => a !== undefined && !a.internal && a.family === 'IPv4' && isBlockedAddress(a.address) && !isLoopbackHost(a.address),
  )?.address;

describe('delivery in development never opens a connection to a private address', () => {
  it.skipIf(privateLocal === undefined)(
    "a listener on this machine's private address sees nothing, by literal or by name",
    async () => {
      let connections = 0;
      const server = createServer((socket) => {
        connections += 1;
        socket.destroy();
      });
      servers.push(server);
      await new Promise<void>((resolve) => server.listen(0, privateLocal, resolve));
      const { port } = server.address() as AddressInfo;
      const http = client(development, fakeDns({ 'lan.attacker.example': [privateLocal ?? ''] }));
      expect(await http.post(`http://${privateLocal}:${port}/`, {}, '{}')).toMatchObject({
        status: null,
        error: expect.stringMatching(/blocked address/),
      });
      expect(await http.post(`http://lan.attacker.example:${port}/`, {}, '{}')).toMatchObject({
        status: null,
        error: expect.stringMatching(/blocked address/),
      });
      expect(connections).toBe(0);
    },
  );
});

describeDialects('the admin API in development (what `npm start` runs) on %s', (dialect, skip) => {
  let t!: TestApp;
  freshAppEach(dialect, skip, (app) => {
    t = app;
  });

  it.skipIf(skip)('refuses the metadata service in its spellings, and still takes a loopback receiver over http', async () => {
    expect(t.config.env).toBe('development');
    await createOrg(t);
    for (const host of [
      '169.254.169.254',
      '2852039166',
      '0xA9FEA9FE',
      '0251.0376.0251.0376',
      '[::ffff:169.254.169.254]',
      '[fe80::1]',
      '[fd00:ec2::254]',
      'metadata.google.internal',
    ]) {
      const err = expectError(
        await admin(t, 'POST', '/organizations/acme/webhooks', { url: `http://${host}/latest/meta-data` }),
        400,
        'invalid_body',
      );
      expect(err.details?.fields?.[0]?.field, host).toBe('url');
    }
    const ok = await admin(t, 'POST', '/organizations/acme/webhooks', { url: 'http://127.0.0.1:9/hook' });
    expect(ok.statusCode, ok.body).toBe(201);
  });
});

describeDialects('the webhook worker in development on %s', (dialect, skip) => {
  const t = useWebhookStore(dialect, skip);

  it.skipIf(t.skip)(
    'an endpoint stored with the metadata URL (registered before this check) is never posted to: each attempt logs the refusal',
    async () => {
      for (const [id, host] of [
        ['wh_meta', '169.254.169.254'],
        ['wh_dec', '2852039166'],
        ['wh_v6', '[::ffff:169.254.169.254]'],
      ] as const) {
        await insertEndpoint(t.store, { id, url: `http://${host}/latest/meta-data`, secret: testSecret(1) }, t.clock.now());
      }
      const d = testDispatcher(t.store, t.clock, t.closer);
      expect(d.settings.urlPolicy).toEqual(development);
      await insertQueued(t.store, 1, t.clock.now(), 'outbox');
      await d.pump();
      const entries = await t.store.webhookDeliveries.list('acme', {}, 10);
      expect(entries).toHaveLength(3);
      for (const entry of entries) {
        expect(entry.log[0], entry.endpoint_id).toMatchObject({
          status: null,
          error: expect.stringMatching(/^blocked address: (169\.254\.169\.254|::ffff:a9fe:a9fe)$/),
        });
      }
    },
  );
});
