import { describe, expect, it } from 'vitest';
import { throttlePause } from '../../src/delivery/pacing.js';
import { DeliveryError, type Transport } from '../../src/delivery/transport.js';
import { createSesTransport, readSesSettings as readSesSettingsOf, sesTransport } from '../../src/delivery/transports/ses.js';
import { Closer } from '../support/cleanup.js';
import { freePort, waitFor } from '../support/smtp-sink.js';
import { startSesFake, type SesError, type SesFake } from '../support/providers/fakes/ses.js';
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
const readSesSettings = (settings: Record<string, unknown>) => readSesSettingsOf({ id: 'svc', settings });

const CREDS = {
  accessKeyId: 'AKIAMAILROOMTEST0001',
  secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
  region: 'eu-west-1',
};

const sesSettings = (fake: SesFake, extra: Record<string, unknown> = {}) => ({
  ses: {
    region: CREDS.region,
    access_key_id: CREDS.accessKeyId,
    secret_access_key: CREDS.secretAccessKey,
    configuration_set: 'mailroom-events',
    endpoint: fake.url,
    ...extra,
  },
});

const service = (settings: Record<string, unknown>) => serviceRow('ses', settings);

describeDialects('SES transport through the worker on %s', (dialect, skip) => {
  const h = providerHarness(dialect);

  it.skipIf(skip)(
    'a full send: Destination to/cc/bcc, raw MIME with reply-to, our Message-ID ' +
      'and attachments byte for byte, the tag and configuration set; MessageId recorded',
    async () => {
      const fake = await startSesFake(CREDS, h.closer);
      const s = await h.setup('ses', sesTransport, sesSettings(fake));
      const id = await s.send();
      expect(await s.worker.runOnce()).toBe(1);

      expect(fake.received).toHaveLength(1);
      const got = fake.received[0]!;
      expect(got.body.FromEmailAddress).toBe('noreply@acme.test');
      expect(got.body.Destination).toEqual({
        ToAddresses: ['owner@acme.test', 'second@acme.test'],
        CcAddresses: ['audit@acme.test'],
        BccAddresses: ['archive@acme.test'],
      });
      expect(got.body.EmailTags).toEqual([{ Name: 'mailroom_message_id', Value: id }]);
      expect(got.body.ConfigurationSetName).toBe('mailroom-events');

      const m = await s.t.store.messages.get('acme', id);
      const p = got.parsed;
      expect(p.messageId).toBe(m!.header_message_id);
      expect(p.from?.value).toEqual([{ name: 'Acme Support', address: 'noreply@acme.test' }]);
      expect(p.subject).toBe(`Order for ${PARAMS.name}`);
      expect(p.text?.trim()).toBe(PARAMS.message);
      expect(p.html).toContain(`<p>${PARAMS.message}</p>`);
      expect(p.replyTo?.value).toEqual([{ name: PARAMS.name, address: PARAMS.email }]);
      expect(p.cc && !Array.isArray(p.cc) ? p.cc.value.map((a) => a.address) : []).toEqual(['audit@acme.test']);
      expect(got.mime.toString('latin1')).not.toMatch(/^bcc:/im);
      expect(got.mime.toString('latin1')).not.toContain('archive@acme.test');
      expect(p.attachments.map((a) => [a.filename, a.contentType])).toEqual(ATTACHMENTS.map((a) => [a.filename, a.content_type]));
      for (const [i, a] of ATTACHMENTS.entries()) expect(Buffer.compare(p.attachments[i]!.content, a.content)).toBe(0);

      const v = await view(s.t, id);
      expect(v.status).toBe('sent');
      expect(v.events.at(-1)).toMatchObject({ type: 'sent', details: { response: `ses 200 ${got.messageId}` } });
      expect(m!.provider_message_id).toBe(got.messageId);
    },
  );

  it.skipIf(skip)(
    'a wrong secret key: the fake refuses the signature (403 SignatureDoesNotMatch) → held_service_error',
    async () => {
      const fake = await startSesFake(CREDS, h.closer);
      const s = await h.setup(
        'ses',
        sesTransport,
        sesSettings(fake, { secret_access_key: 'not-the-secret-0000000000000000000000000' }),
      );
      const id = await s.send(false);
      expect(await s.worker.runOnce()).toBe(1);
      expect(fake.received).toHaveLength(0);
      expect(fake.requests).toEqual([{ method: 'POST', path: '/v2/email/outbound-emails', status: 403 }]);
      const m = await s.t.store.messages.get('acme', id);
      expect(m!.status).toBe('held_service_error');
      expect(m!.last_error).toMatch(/^ses 403 SignatureDoesNotMatch: The request signature we calculated does not match/);
    },
  );

  it.skipIf(skip)(
    'each outcome kind on the timeline: throttled and 5xx deferred, ' +
      'unverified sender and suspended account held, rejected content failed',
    async () => {
      const fake = await startSesFake(CREDS, h.closer);
      const s = await h.setup('ses', sesTransport, sesSettings(fake));
      // A deferred message is queued again for later, with a `deferred` event on its timeline.
      const cases: Array<[SesError, string, RegExp]> = [
        [
          { status: 429, type: 'TooManyRequestsException', message: 'Too many requests have been made to the operation.' },
          'deferred',
          /^ses 429 TooManyRequestsException/,
        ],
        [
          { status: 503, type: 'ServiceUnavailable', message: 'Service is unable to handle request.' },
          'deferred',
          /^ses 503 ServiceUnavailable/,
        ],
        [
          {
            status: 400,
            type: 'MessageRejected',
            message:
              'Email address is not verified. The following identities failed the check in region EU-WEST-1: noreply@acme.test',
          },
          'held_service_error',
          /not verified/,
        ],
        [
          { status: 400, type: 'AccountSuspendedException', message: 'Your account has been suspended.' },
          'held_service_error',
          /AccountSuspendedException/,
        ],
        [
          { status: 400, type: 'MessageRejected', message: 'Illegal header.' },
          'failed',
          /^ses 400 MessageRejected: Illegal header/,
        ],
      ];
      for (const [error, status, reason] of cases) {
        fake.failNext(error);
        const id = await s.send(false);
        expect(await s.worker.runOnce()).toBe(1);
        const m = await s.t.store.messages.get('acme', id);
        const last = (await view(s.t, id)).events.at(-1)!;
        expect([error.type, status === 'deferred' ? last.type : m!.status]).toEqual([error.type, status]);
        if (status === 'deferred') expect(m!.status).toBe('queued');
        expect(m!.last_error).toMatch(reason);
        // Throttling pauses the service's pacing (SES gives no Retry-After): past the pause, before the retry.
        if (error.status === 429) s.t.clock.advance(throttlePause(undefined) + 1);
      }
      expect(fake.received).toHaveLength(0);
      expect(fake.requests).toHaveLength(cases.length);
    },
  );
});

describe('SES error table (every row, through the SDK against the fake)', () => {
  const rows: Array<[SesError, DeliveryError['kind'], boolean]> = [
    [
      { status: 429, type: 'TooManyRequestsException', message: 'Too many requests have been made to the operation.' },
      'temporary',
      true,
    ],
    [{ status: 400, type: 'ThrottlingException', message: 'Rate exceeded' }, 'temporary', true],
    [{ status: 400, type: 'Throttling', message: 'Maximum sending rate exceeded.' }, 'temporary', true],
    [
      { status: 400, type: 'LimitExceededException', message: 'There are too many instances of the specified resource type.' },
      'temporary',
      true,
    ],
    [
      { status: 500, type: 'InternalFailure', message: 'The request processing has failed because of an unknown error.' },
      'temporary',
      false,
    ],
    [
      { status: 503, type: 'ServiceUnavailable', message: 'The request has failed due to a temporary failure of the server.' },
      'temporary',
      false,
    ],
    [{ status: 500, type: 'InternalServiceErrorException', message: 'Internal error' }, 'temporary', false],
    [{ status: 400, type: 'RequestExpired', message: 'Request has expired.' }, 'temporary', false],
    [
      { status: 403, type: 'AccessDeniedException', message: 'You do not have sufficient access to perform this action.' },
      'service',
      false,
    ],
    [
      { status: 403, type: 'UnrecognizedClientException', message: 'The security token included in the request is invalid.' },
      'service',
      false,
    ],
    [
      { status: 403, type: 'InvalidClientTokenId', message: 'The security token included in the request is invalid.' },
      'service',
      false,
    ],
    [
      {
        status: 403,
        type: 'SignatureDoesNotMatch',
        message: 'The request signature we calculated does not match the signature you provided.',
      },
      'service',
      false,
    ],
    [
      { status: 400, type: 'IncompleteSignature', message: 'The request signature does not conform to AWS standards.' },
      'service',
      false,
    ],
    [
      { status: 403, type: 'ExpiredTokenException', message: 'The security token included in the request is expired' },
      'service',
      false,
    ],
    [{ status: 403, type: 'SomethingNew', message: 'Forbidden' }, 'service', false],
    [
      {
        status: 400,
        type: 'MessageRejected',
        message:
          'Email address is not verified. The following identities failed the check in region EU-WEST-1: noreply@acme.test',
      },
      'service',
      false,
    ],
    [
      {
        status: 400,
        type: 'MailFromDomainNotVerifiedException',
        message: "The message can't be sent because the sending domain isn't verified.",
      },
      'service',
      false,
    ],
    [
      {
        status: 400,
        type: 'AccountSuspendedException',
        message: "The message can't be sent because the account's ability to send email has been permanently restricted.",
      },
      'service',
      false,
    ],
    [
      {
        status: 400,
        type: 'SendingPausedException',
        message: "The message can't be sent because the account's ability to send email is currently paused.",
      },
      'service',
      false,
    ],
    [
      { status: 404, type: 'NotFoundException', message: 'Configuration set <mailroom-events> does not exist.' },
      'service',
      false,
    ],
    [
      { status: 400, type: 'MessageRejected', message: "The message can't be sent because it contains invalid content." },
      'permanent',
      false,
    ],
    [{ status: 400, type: 'BadRequestException', message: 'The input you provided is invalid.' }, 'permanent', false],
    [{ status: 413, type: 'PayloadTooLarge', message: 'Message length is more than 40 MB.' }, 'permanent', false],
  ];
  const closer = new Closer();

  it.each(rows)('%o → %s (throttled: %s)', async (error, kind, throttled) => {
    const fake = await startSesFake(CREDS, closer);
    const transport = sesTransport(service(sesSettings(fake)), { dataDir: '/nonexistent' });
    try {
      fake.failNext(error);
      const err = await failure(transport.send(MAIL));
      expect(err).toBeInstanceOf(DeliveryError);
      const d = err as DeliveryError;
      expect([d.kind, d.options.throttled === true]).toEqual([kind, throttled]);
      expect(d.message).toBe(`ses ${error.status} ${error.type}: ${error.message}`);
      expect(d.recipients).toEqual([]);
      // The SDK made one request: it never retries on its own (maxAttempts 1).
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
      ['https://ses-endpoint.invalid', 'service'],
    ] as const) {
      const transport = sesTransport(
        service({ ses: { region: 'eu-west-1', access_key_id: 'AKIA0', secret_access_key: 'x', endpoint } }),
        { dataDir: '/nonexistent' },
      );
      const err = await failure(transport.send(MAIL));
      await transport.close();
      expect([endpoint, err instanceof DeliveryError ? err.kind : String(err)]).toEqual([endpoint, kind]);
    }
  });

  it('settings: region required, keys both or neither, names and URLs checked', () => {
    const ok = readSesSettings({ ses: { region: 'us-east-1' } });
    expect(ok).toEqual({ region: 'us-east-1', credentials: undefined, configurationSet: undefined, endpoint: undefined });
    expect(() => readSesSettings({})).toThrow(/no ses settings/);
    expect(() => readSesSettings({ ses: { region: 'Europe' } })).toThrow(/ses\.region/);
    expect(() => readSesSettings({ ses: { region: 'eu-west-1', access_key_id: 'AKIA' } })).toThrow(/both, or neither/);
    expect(() => readSesSettings({ ses: { region: 'eu-west-1', configuration_set: 'has space' } })).toThrow(/configuration_set/);
    expect(() => readSesSettings({ ses: { region: 'eu-west-1', endpoint: 'ftp://x' } })).toThrow(/ses\.endpoint/);
    expect(() => readSesSettings({ ses: { region: 'eu-west-1', access_key_id: 5, secret_access_key: 'x' } })).toThrow(
      /ses\.access_key_id/,
    );
  });
});

describe('SES service test (GetAccount)', () => {
  const closer = new Closer();
  const withTransport = (settings: Record<string, unknown>, fn: (t: Transport) => Promise<void>, timeoutMs = 30_000) =>
    withClosedTransport(
      createSesTransport({ connectTimeoutMs: timeoutMs, requestTimeoutMs: timeoutMs })(service(settings), {
        dataDir: '/nonexistent',
      }),
      closer,
      fn,
    );
  it('success: one signed GET /v2/email/account, nothing sent', async () => {
    const fake = await startSesFake(CREDS, closer);
    await withTransport(sesSettings(fake), async (t) => {
      await t.verify!();
      expect(fake.requests).toEqual([{ method: 'GET', path: '/v2/email/account', status: 200 }]);
      expect(fake.received).toHaveLength(0);
    });
  });

  it('auth: a wrong secret, an unknown key id, a key without ses:GetAccount', async () => {
    const fake = await startSesFake(CREDS, closer);
    await withTransport(sesSettings(fake, { secret_access_key: 'wrong-secret' }), async (t) => {
      expect(await reasonOf(t)).toEqual(['auth', expect.stringMatching(/^ses 403 SignatureDoesNotMatch/)]);
    });
    const fake2 = await startSesFake(CREDS, closer);
    await withTransport(sesSettings(fake2, { access_key_id: 'AKIAUNKNOWN000000000' }), async (t) => {
      expect(await reasonOf(t)).toEqual([
        'auth',
        expect.stringMatching(/^ses 403 UnrecognizedClientException: The security token included in the request is invalid/),
      ]);
    });
    const fake3 = await startSesFake(CREDS, closer);
    fake3.failNext({ status: 403, type: 'AccessDeniedException', message: 'User is not authorized to perform: ses:GetAccount' });
    await withTransport(sesSettings(fake3), async (t) => {
      expect(await reasonOf(t)).toEqual(['auth', expect.stringMatching(/ses:GetAccount.*may still send/)]);
    });
  });

  it('other: sending disabled for the account, or a server error', async () => {
    const fake = await startSesFake(CREDS, closer);
    fake.account = { SendingEnabled: false, EnforcementStatus: 'SHUTDOWN' };
    await withTransport(sesSettings(fake), async (t) => {
      expect(await reasonOf(t)).toEqual(['other', expect.stringMatching(/SendingEnabled: false/)]);
    });
    const fake2 = await startSesFake(CREDS, closer);
    fake2.failNext({ status: 500, type: 'InternalFailure', message: 'boom' });
    await withTransport(sesSettings(fake2), async (t) => {
      expect(await reasonOf(t)).toEqual(['other', 'ses 500 InternalFailure: boom']);
    });
  });

  it('connect, timeout and tls: refused port, a server that never answers, https against a plain port', async () => {
    const port = await freePort();
    await withTransport(
      { ses: { region: 'eu-west-1', access_key_id: 'A', secret_access_key: 'B', endpoint: `http://127.0.0.1:${port}` } },
      async (t) => {
        expect((await reasonOf(t))[0]).toBe('connect');
      },
    );
    await withSilentServer(async (endpoint) => {
      await withTransport(
        { ses: { region: 'eu-west-1', access_key_id: 'A', secret_access_key: 'B', endpoint } },
        async (t) => {
          expect((await reasonOf(t))[0]).toBe('timeout');
        },
        300,
      );
    });
    const fake = await startSesFake(CREDS, closer);
    await withTransport(sesSettings(fake, { endpoint: fake.url.replace('http:', 'https:') }), async (t) => {
      expect((await reasonOf(t))[0]).toBe('tls');
    });
  });
});

describe('SES transport close()', () => {
  it('waits for a send in flight, not aborting it (client.destroy() would: a send SES may have accepted, retried)', async () => {
    const closer = new Closer();
    const fake = await startSesFake(CREDS, closer);
    // A slow answer (the thing under test: a send still in flight when close() is called).
    fake.answerDelayMs = 300;
    const transport = createSesTransport({ connectTimeoutMs: 5_000, requestTimeoutMs: 5_000 })(service(sesSettings(fake)), {
      dataDir: '/nonexistent',
    });
    try {
      const sending = transport.send(MAIL);
      // The request reaches the fake before close() is called.
      await waitFor(() => fake.received.length === 1, 5_000, 'the request to reach the fake');
      await transport.close();
      expect((await sending).providerMessageId).toBe(fake.received[0]!.messageId);
    } finally {
      await closer.closeAll();
    }
  });
});
