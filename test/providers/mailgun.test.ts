import { describe, expect, it } from 'vitest';
import { throttlePause } from '../../src/delivery/pacing.js';
import { DeliveryError, type Transport } from '../../src/delivery/transport.js';
import {
  createMailgunTransport,
  mailgunTransport,
  readMailgunSettings as readMailgunSettingsOf,
} from '../../src/delivery/transports/mailgun.js';
import { createProviderHttp, type ProviderHttpOptions } from '../../src/delivery/transports/http-client.js';
import { Closer } from '../support/cleanup.js';
import { freePort } from '../support/smtp-sink.js';
import { startMailgunFake, type MailgunAnswer, type MailgunFake } from '../support/providers/fakes/mailgun.js';
import { ATTACHMENTS, providerHarness } from '../support/providers/send-path.js';
import { PARAMS, view } from '../support/delivery.js';
import {
  failure,
  MAIL,
  reasonOf,
  serviceRow,
  withSilentServer,
  withTransport as withClosedTransport,
} from '../support/providers/transport.js';
import { describeDialects } from '../support/dialects.js';

/** The reader takes the service row (its id names it in errors): these rows give only settings. */
const readMailgunSettings = (settings: Record<string, unknown>) => readMailgunSettingsOf({ id: 'svc', settings });

const ACCOUNT = { domain: 'mg.acme.test', apiKey: 'key-3ax6xnjp29jd6fds4gc373sgvjxteol0' };

const mgSettings = (fake: MailgunFake, extra: Record<string, unknown> = {}) => ({
  mailgun: { domain: ACCOUNT.domain, api_key: ACCOUNT.apiKey, region: 'eu', endpoint: fake.url, ...extra },
});

const service = (settings: Record<string, unknown>) => serviceRow('mailgun', settings);

const json = (status: number, body: unknown, headers: Record<string, string> = {}): MailgunAnswer => ({
  status,
  body: JSON.stringify(body),
  headers: { 'content-type': 'application/json', ...headers },
});

describeDialects('Mailgun transport through the worker on %s', (dialect, skip) => {
  const h = providerHarness(dialect);

  it.skipIf(skip)(
    'a full send: every envelope recipient in `to` (bcc only there), the MIME as a file with ' +
      'reply-to, our Message-ID and attachments byte for byte, v:mailroom_message_id; the id recorded without <>',
    async () => {
      const fake = await startMailgunFake(ACCOUNT, h.closer);
      const s = await h.setup('mailgun', mailgunTransport, mgSettings(fake));
      const id = await s.send();
      expect(await s.worker.runOnce()).toBe(1);

      expect(fake.received).toHaveLength(1);
      const got = fake.received[0]!;
      expect(got.to).toEqual(['owner@acme.test', 'second@acme.test', 'audit@acme.test', 'archive@acme.test']);
      expect(got.variables).toEqual({ mailroom_message_id: id });
      expect(got.filename).toBe('MimeMessage');

      const m = await s.t.store.messages.get('acme', id);
      const p = got.parsed;
      expect(p.messageId).toBe(m!.header_message_id);
      expect(p.from?.value).toEqual([{ name: 'Acme Support', address: 'noreply@acme.test' }]);
      expect(p.subject).toBe(`Order for ${PARAMS.name}`);
      expect(p.text?.trim()).toBe(PARAMS.message);
      expect(p.html).toContain(`<p>${PARAMS.message}</p>`);
      expect(p.replyTo?.value).toEqual([{ name: PARAMS.name, address: PARAMS.email }]);
      expect(p.to && !Array.isArray(p.to) ? p.to.value.map((a) => a.address) : []).toEqual([
        'owner@acme.test',
        'second@acme.test',
      ]);
      expect(p.cc && !Array.isArray(p.cc) ? p.cc.value.map((a) => a.address) : []).toEqual(['audit@acme.test']);
      expect(got.mime.toString('latin1')).not.toMatch(/^bcc:/im);
      expect(got.mime.toString('latin1')).not.toContain('archive@acme.test');
      expect(p.attachments.map((a) => [a.filename, a.contentType])).toEqual(ATTACHMENTS.map((a) => [a.filename, a.content_type]));
      for (const [i, a] of ATTACHMENTS.entries()) expect(Buffer.compare(p.attachments[i]!.content, a.content)).toBe(0);

      const v = await view(s.t, id);
      expect(v.status).toBe('sent');
      expect(v.events.at(-1)).toMatchObject({ type: 'sent', details: { response: `mailgun 200 Queued. Thank you. ${got.id}` } });
      expect(m!.provider_message_id).toBe(got.id.slice(1, -1));
    },
  );

  it.skipIf(skip)('a wrong api_key: 401 Forbidden → held_service_error naming the region', async () => {
    const fake = await startMailgunFake(ACCOUNT, h.closer);
    const s = await h.setup('mailgun', mailgunTransport, mgSettings(fake, { api_key: 'key-wrong' }));
    const id = await s.send(false);
    expect(await s.worker.runOnce()).toBe(1);
    expect(fake.received).toHaveLength(0);
    const m = await s.t.store.messages.get('acme', id);
    expect(m!.status).toBe('held_service_error');
    expect(m!.last_error).toBe(
      'mailgun HTTP 401 Forbidden (the api_key is not valid for the eu region; a domain works only in its own region)',
    );
  });

  it.skipIf(skip)('each outcome kind on the timeline: 429 and 5xx deferred, 403 held, 400 failed', async () => {
    const fake = await startMailgunFake(ACCOUNT, h.closer);
    const s = await h.setup('mailgun', mailgunTransport, mgSettings(fake));
    const cases: Array<[MailgunAnswer, string, string]> = [
      [json(429, { message: 'Too many requests' }, { 'retry-after': '120' }), 'deferred', 'mailgun HTTP 429 Too many requests'],
      [json(503, { message: 'Service Unavailable' }), 'deferred', 'mailgun HTTP 503 Service Unavailable'],
      [
        json(403, { message: 'Domain mg.acme.test is not allowed to send: Free accounts are for test purposes only.' }),
        'held_service_error',
        'mailgun HTTP 403 Domain mg.acme.test is not allowed to send: Free accounts are for test purposes only.',
      ],
      [
        json(400, { message: 'to parameter is not a valid address. please check documentation' }),
        'failed',
        'mailgun HTTP 400 to parameter is not a valid address. please check documentation',
      ],
    ];
    for (const [answer, status, reason] of cases) {
      fake.failNext(answer);
      const id = await s.send(false);
      const before = s.t.clock.now();
      expect(await s.worker.runOnce()).toBe(1);
      const m = await s.t.store.messages.get('acme', id);
      const last = (await view(s.t, id)).events.at(-1)!;
      expect([answer.status, status === 'deferred' ? last.type : m!.status]).toEqual([answer.status, status]);
      expect(m!.last_error).toBe(reason);
      // Retry-After: 120 → not retried sooner than two minutes from the attempt.
      if (answer.status === 429) {
        expect(m!.next_attempt_at).toBeGreaterThanOrEqual(before + 120_000);
        // The service's pacing pauses (the worker's pacer, on the test's clock): past it, well before the retry.
        s.t.clock.advance(throttlePause(120_000) + 1);
      }
    }
    expect(fake.received).toHaveLength(0);
  });
});

describe('Mailgun error table (every row, through the HTTP client against the fake)', () => {
  const closer = new Closer();
  const rows: Array<[string, MailgunAnswer, DeliveryError['kind'], boolean, number | undefined, RegExp]> = [
    [
      '429 with Retry-After',
      json(429, { message: 'Too many requests' }, { 'retry-after': '7' }),
      'temporary',
      true,
      7_000,
      /^mailgun HTTP 429 Too many requests$/,
    ],
    ['429 without Retry-After', json(429, { message: 'Too many requests' }), 'temporary', true, undefined, /^mailgun HTTP 429/],
    [
      '500',
      json(500, { message: 'Internal Server Error' }),
      'temporary',
      false,
      undefined,
      /^mailgun HTTP 500 Internal Server Error$/,
    ],
    [
      '502 (an HTML page)',
      { status: 502, body: '<html><body><h1>502 Bad Gateway</h1></body></html>', headers: { 'content-type': 'text/html' } },
      'temporary',
      false,
      undefined,
      /^mailgun HTTP 502 502 Bad Gateway$/,
    ],
    ['503', json(503, { message: 'Service Unavailable' }), 'temporary', false, undefined, /^mailgun HTTP 503/],
    ['504', json(504, { message: 'Gateway Timeout' }), 'temporary', false, undefined, /^mailgun HTTP 504/],
    [
      '401 Forbidden',
      { status: 401, body: 'Forbidden', headers: { 'content-type': 'text/plain' } },
      'service',
      false,
      undefined,
      /^mailgun HTTP 401 Forbidden \(the api_key is not valid for the eu region/,
    ],
    [
      '403 sandbox recipient',
      json(403, {
        message:
          'Sandbox subdomains are for test purposes only. Please add your own ' +
          'domain or add the address to authorized recipients in Account Settings.',
      }),
      'service',
      false,
      undefined,
      /^mailgun HTTP 403 Sandbox subdomains/,
    ],
    [
      '404 domain not found',
      json(404, { message: 'Domain not found: mg.acme.test' }),
      'service',
      false,
      undefined,
      /^mailgun HTTP 404 Domain not found: mg\.acme\.test \(the domain mg\.acme\.test is not found/,
    ],
    [
      '402 request failed',
      json(402, { message: 'Request Failed' }),
      'service',
      false,
      undefined,
      /^mailgun HTTP 402 Request Failed$/,
    ],
    [
      '400 bad request',
      json(400, { message: "'from' parameter is not a valid address. please check documentation" }),
      'permanent',
      false,
      undefined,
      /^mailgun HTTP 400 'from' parameter/,
    ],
    [
      '413 too large',
      {
        status: 413,
        body: '<html><head><title>413 Request Entity Too Large</title></head></html>',
        headers: { 'content-type': 'text/html' },
      },
      'permanent',
      false,
      undefined,
      /^mailgun HTTP 413 413 Request Entity Too Large$/,
    ],
    ['409 another 4xx', json(409, { message: 'Conflict' }), 'permanent', false, undefined, /^mailgun HTTP 409 Conflict$/],
    [
      '302 redirect (not followed)',
      { status: 302, body: '', headers: { location: 'https://elsewhere.test/' } },
      'service',
      false,
      undefined,
      /^mailgun HTTP 302 \(an answer that is neither success nor error: check the service's endpoint\)$/,
    ],
  ];

  it.each(rows)('%s', async (_name, answer, kind, throttled, retryAfterMs, message) => {
    const fake = await startMailgunFake(ACCOUNT, closer);
    const transport = mailgunTransport(service(mgSettings(fake)), { dataDir: '/nonexistent' });
    try {
      fake.failNext(answer);
      const err = await failure(transport.send(MAIL));
      expect(err).toBeInstanceOf(DeliveryError);
      const d = err as DeliveryError;
      expect([d.kind, d.options.throttled === true, d.options.retryAfterMs]).toEqual([kind, throttled, retryAfterMs]);
      expect(d.message).toMatch(message);
      expect(d.recipients).toEqual([]);
      expect(fake.requests).toHaveLength(1);
    } finally {
      await transport.close();
      await closer.closeAll();
    }
  });

  it('no answer: refused connection → temporary; an endpoint name that does not resolve → service', async () => {
    const port = await freePort();
    for (const [endpoint, kind] of [
      [`http://127.0.0.1:${port}`, 'temporary'],
      ['https://mailgun-endpoint.invalid', 'service'],
    ] as const) {
      const transport = mailgunTransport(service({ mailgun: { domain: ACCOUNT.domain, api_key: 'k', endpoint } }), {
        dataDir: '/nonexistent',
      });
      const err = await failure(transport.send(MAIL));
      await transport.close();
      expect([endpoint, err instanceof DeliveryError ? err.kind : String(err)]).toEqual([endpoint, kind]);
    }
  });

  it('settings: domain and api_key required, region us (default) or eu, endpoint an http(s) URL', () => {
    expect(readMailgunSettings({ mailgun: { domain: 'mg.example.com', api_key: 'k' } })).toEqual({
      domain: 'mg.example.com',
      apiKey: 'k',
      region: 'us',
      base: 'https://api.mailgun.net',
    });
    expect(readMailgunSettings({ mailgun: { domain: 'mg.example.com', api_key: 'k', region: 'eu' } }).base).toBe(
      'https://api.eu.mailgun.net',
    );
    expect(
      readMailgunSettings({ mailgun: { domain: 'mg.example.com', api_key: 'k', endpoint: 'http://127.0.0.1:9/' } }).base,
    ).toBe('http://127.0.0.1:9');
    expect(() => readMailgunSettings({})).toThrow(/no mailgun settings/);
    expect(() => readMailgunSettings({ mailgun: { domain: 'not a domain', api_key: 'k' } })).toThrow(/mailgun\.domain/);
    expect(() => readMailgunSettings({ mailgun: { domain: 'mg.example.com' } })).toThrow(/mailgun\.api_key/);
    expect(() => readMailgunSettings({ mailgun: { domain: 'mg.example.com', api_key: 'k', region: 'asia' } })).toThrow(
      /mailgun\.region/,
    );
    expect(() => readMailgunSettings({ mailgun: { domain: 'mg.example.com', api_key: 'k', endpoint: 'ftp://x' } })).toThrow(
      /mailgun\.endpoint/,
    );
  });

  it('a retry for some recipients names only those in `to`', async () => {
    const fake = await startMailgunFake(ACCOUNT, closer);
    const transport = mailgunTransport(service(mgSettings(fake)), { dataDir: '/nonexistent' });
    try {
      const receipt = await transport.send({ ...MAIL, envelopeTo: ['b@example.com'] });
      expect(fake.received[0]!.to).toEqual(['b@example.com']);
      expect(receipt).toEqual({
        response: 'mailgun 200 Queued. Thank you. <msg_unit0001@mailroom.test>',
        providerMessageId: 'msg_unit0001@mailroom.test',
      });
    } finally {
      await transport.close();
      await closer.closeAll();
    }
  });
});

describe('Mailgun service test (domain lookup)', () => {
  const closer = new Closer();
  const withTransport = (settings: Record<string, unknown>, fn: (t: Transport) => Promise<void>, timeoutMs?: number) =>
    withClosedTransport(
      createMailgunTransport(timeoutMs !== undefined ? { timeoutMs } : {})(service(settings), { dataDir: '/nonexistent' }),
      closer,
      fn,
    );
  it('success: one authenticated GET /v3/domains/<domain>, nothing sent', async () => {
    const fake = await startMailgunFake(ACCOUNT, closer);
    await withTransport(mgSettings(fake), async (t) => {
      await t.verify!();
      expect(fake.requests).toEqual([{ method: 'GET', path: '/v3/domains/mg.acme.test', status: 200 }]);
    });
  });

  it('auth, unverified_sender and other: a wrong key, an unverified or disabled domain, an unknown one, a 500', async () => {
    const cases: Array<[Record<string, unknown>, (f: MailgunFake) => void, string, RegExp]> = [
      [
        { api_key: 'key-wrong' },
        () => undefined,
        'auth',
        /^mailgun HTTP 401 Forbidden \(check api_key and region eu; a domain sending key/,
      ],
      [
        {},
        (f) => {
          f.state = 'unverified';
        },
        'unverified_sender',
        /domain mg\.acme\.test is unverified/,
      ],
      [
        {},
        (f) => {
          f.state = 'disabled';
        },
        'other',
        /disabled/,
      ],
      [{ domain: 'other.acme.test' }, () => undefined, 'other', /no domain other\.acme\.test in this account's eu region/],
      [
        {},
        (f) => f.failNext(json(500, { message: 'Internal Server Error' })),
        'other',
        /^mailgun HTTP 500 Internal Server Error$/,
      ],
    ];
    for (const [extra, arrange, reason, message] of cases) {
      const fake = await startMailgunFake(ACCOUNT, closer);
      arrange(fake);
      await withTransport(mgSettings(fake, extra), async (t) => {
        const [r, m] = await reasonOf(t);
        expect([reason, r]).toEqual([reason, reason]);
        expect(m).toMatch(message);
      });
    }
  });

  it('connect, timeout and tls: refused port, a server that never answers, https against a plain port', async () => {
    const port = await freePort();
    await withTransport(
      { mailgun: { domain: ACCOUNT.domain, api_key: 'k', endpoint: `http://127.0.0.1:${port}` } },
      async (t) => {
        expect((await reasonOf(t))[0]).toBe('connect');
      },
    );
    await withSilentServer(async (endpoint) => {
      await withTransport(
        { mailgun: { domain: ACCOUNT.domain, api_key: 'k', endpoint } },
        async (t) => {
          expect((await reasonOf(t))[0]).toBe('timeout');
        },
        300,
      );
    });
    const fake = await startMailgunFake(ACCOUNT, closer);
    await withTransport(mgSettings(fake, { endpoint: fake.url.replace('http:', 'https:') }), async (t) => {
      expect((await reasonOf(t))[0]).toBe('tls');
    });
  });
});

describe('Mailgun service test deadline', () => {
  it('the domain lookup gets the 10 s deadline of every service test, not the 30 s of a send', async () => {
    const closer = new Closer();
    const fake = await startMailgunFake(ACCOUNT, closer);
    const deadlines: Array<number | undefined> = [];
    const http = (options: ProviderHttpOptions) => {
      const real = createProviderHttp(options);
      return {
        close: () => real.close(),
        request: (req: Parameters<typeof real.request>[0]) => {
          deadlines.push(req.timeoutMs);
          return real.request(req);
        },
      };
    };
    await withClosedTransport(
      createMailgunTransport({ http })(service(mgSettings(fake)), { dataDir: '/nonexistent' }),
      closer,
      async (t) => {
        await t.verify!();
      },
    );
    expect(deadlines).toEqual([10_000]);
  });
});
