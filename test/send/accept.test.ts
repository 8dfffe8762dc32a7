import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { sha256 } from '../../src/domain/ids.js';
import { freshAppEach, type TestApp } from '../support/app.js';
import { PRIVATE_KEY, PUBLIC_KEY, seedOrg } from '../support/seed.js';
import { contentRow } from '../support/db.js';
import { bearer, expectAccepted, expectError } from '../support/http.js';
import { creditsOf, eventTypes, messageCount } from '../support/stored.js';
import { PARAMS, post, sendBody } from '../support/send.js';
import { describeDialects } from '../support/dialects.js';
import { waitFor } from '../support/smtp-sink.js';

interface StoredAddress {
  address: string;
  name?: string;
}
interface StoredContent {
  subject: string;
  from: StoredAddress;
  to: StoredAddress[];
  reply_to: StoredAddress[];
  html: string;
  text: string;
}

describeDialects('POST /v1/send acceptance on %s', (dialect, skip) => {
  let t!: TestApp;
  freshAppEach(dialect, skip, (app) => {
    t = app;
  });

  const contentOf = async (id: string): Promise<StoredContent> => {
    const row = await contentRow(t.store, id);
    return JSON.parse(row.content) as StoredContent;
  };
  const serviceOf = async (id: string) => (await t.store.messages.get('acme', id))?.service_id;

  /** Asserts the request failed before acceptance: no message, no credit taken. */
  const expectNothingTaken = async (credits = 100) => {
    expect(await messageCount(t)).toBe(0);
    expect(await creditsOf(t)).toBe(credits);
  };

  it.skipIf(skip)('202 with message_id, status queued, status_token and matching X-Mail-* headers', async () => {
    await seedOrg(t.store);
    const res = await post(t, sendBody());
    const body = expectAccepted(res, 'queued');
    expect(Object.keys(body).sort()).toEqual(['message_id', 'status', 'status_token']);

    const row = await t.store.messages.get('acme', body.message_id);
    expect(row).toBeDefined();
    expect(row?.status).toBe('queued');
    expect(row?.template_id).toBe('contact');
    expect(row?.service_id).toBe('outbox');
    expect(row?.key_type).toBe('private');
    expect(row?.credit_taken).toBe(true);
    expect(row?.subject).toBe('Message from Ada');
    // The status token is the credential of this message: only its digest is stored.
    expect(row?.status_token_hash).toBe(sha256(body.status_token));
    expect(await eventTypes(t, body.message_id)).toEqual(['queued']);
    expect(await creditsOf(t)).toBe(99);
    expect(await messageCount(t)).toBe(1);
  });

  it.skipIf(skip)('stores the email rendered from the parameters at acceptance', async () => {
    await seedOrg(t.store);
    const { message_id } = expectAccepted(await post(t, sendBody()));
    const content = await contentOf(message_id);
    expect(content.subject).toBe(`Message from ${PARAMS.name}`);
    expect(content.to.map((a) => a.address)).toEqual(['owner@acme.test']);
    expect(content.reply_to.map((a) => a.address)).toEqual([PARAMS.email]);
    expect(content.from.address).toBe('noreply@acme.test');
    expect(content.html).toBe(`<p>${PARAMS.message}</p>`);
    expect(content.text).toBe(PARAMS.message);

    // A later template edit does not change what was accepted.
    await seedOrg(t.store, {
      templates: [
        {
          id: 'contact',
          subject: 'Changed {{name}}',
          to: 'owner@acme.test',
          from_email: 'noreply@acme.test',
          text: 'x',
          params: [
            { name: 'name', type: 'string' },
            { name: 'email', type: 'email' },
            { name: 'message', type: 'string' },
          ],
        },
      ],
    });
    expect((await contentOf(message_id)).subject).toBe(`Message from ${PARAMS.name}`);
  });

  it.skipIf(skip)('each accepted send takes exactly one credit', async () => {
    await seedOrg(t.store, { credits: 5 });
    for (let i = 1; i <= 3; i++) {
      expectAccepted(await post(t, sendBody()));
      expect(await creditsOf(t)).toBe(5 - i);
    }
    expect(await messageCount(t)).toBe(3);
  });

  it.skipIf(skip)('null fields count as absent', async () => {
    await seedOrg(t.store);
    const body = sendBody({
      service_id: null,
      user_id: null,
      accessToken: null,
      turnstile_token: null,
      turnstile_key: null,
      attachments: null,
    });
    const { message_id } = expectAccepted(await post(t, body));
    expect(await serviceOf(message_id)).toBe('outbox');

    // template_params: null is no parameters: the template's required ones are then missing (422, not 400).
    expectError(await post(t, sendBody({ template_params: null })), 422, 'invalid_template_params');
  });

  it.skipIf(skip)('unknown top-level fields such as lib_version are ignored', async () => {
    await seedOrg(t.store);
    const res = await post(t, sendBody({ lib_version: '5.0.2', something_else: { nested: [1, 2] } }));
    expectAccepted(res);
    expect(await messageCount(t)).toBe(1);
  });

  it.skipIf(skip)('accepts application/json; charset=utf-8', async () => {
    await seedOrg(t.store);
    const res = await post(t, JSON.stringify(sendBody()), { ...bearer(), 'content-type': 'application/json; charset=utf-8' });
    expectAccepted(res);
    const upper = await post(t, JSON.stringify(sendBody()), { ...bearer(), 'content-type': 'Application/JSON;charset=UTF-8' });
    expectAccepted(upper);
    expect(await messageCount(t)).toBe(2);
  });

  it.skipIf(skip)('accepts a chunked request body over a real socket', async () => {
    await seedOrg(t.store);
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = t.app.server.address() as AddressInfo;
    let serverSide: Socket | undefined;
    t.app.server.once('connection', (socket: Socket) => {
      serverSide = socket;
    });
    const json = JSON.stringify(sendBody());
    const half = Math.floor(json.length / 2);
    const res = await new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>((resolve, reject) => {
      const req = http.request(
        {
          host: '127.0.0.1',
          port,
          path: '/v1/send',
          method: 'POST',
          headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked', authorization: `Bearer ${PRIVATE_KEY}` },
        },
        (r) => {
          const chunks: Buffer[] = [];
          r.on('data', (c: Buffer) => chunks.push(c));
          r.on('end', () => resolve({ status: r.statusCode ?? 0, headers: r.headers, body: Buffer.concat(chunks).toString() }));
          r.on('error', reject);
        },
      );
      req.on('error', reject);
      req.write(json.slice(0, half), () => {
        // The second chunk only once the server has read all sent before it: two reads, not one.
        const sent = req.socket?.bytesWritten ?? Number.POSITIVE_INFINITY;
        void waitFor(() => (serverSide?.bytesRead ?? 0) >= sent, 5_000, 'the server to read the first chunk').then(() => {
          req.write(json.slice(half));
          req.end();
        }, reject);
      });
    });
    expect(res.status, res.body).toBe(202);
    const body = JSON.parse(res.body) as { message_id: string; status: string };
    expect(res.headers['x-mail-message-id']).toBe(body.message_id);
    expect(await t.store.messages.get('acme', body.message_id)).toBeDefined();
  });

  describe('400 invalid_body names each failing field', () => {
    const attachment = { filename: 'a.txt', content_base64: 'aGk=' };
    const cases: Array<[string, Record<string, unknown>, string]> = [
      ['missing template_id', { template_params: { ...PARAMS } }, 'template_id'],
      ['empty template_id', sendBody({ template_id: '' }), 'template_id'],
      ['template_id of 65 chars', sendBody({ template_id: 't'.repeat(65) }), 'template_id'],
      ['template_id not a string', sendBody({ template_id: 42 }), 'template_id'],
      ['service_id of 65 chars', sendBody({ service_id: 's'.repeat(65) }), 'service_id'],
      ['user_id over 200 chars', sendBody({ user_id: `pk_${'u'.repeat(198)}` }), 'user_id'],
      ['accessToken over 300 chars', sendBody({ accessToken: `sk_${'a'.repeat(298)}` }), 'accessToken'],
      ['turnstile_token over 4096 chars', sendBody({ turnstile_token: 'x'.repeat(4097) }), 'turnstile_token'],
      ['turnstile_key not org or mail', sendBody({ turnstile_key: 'x' }), 'turnstile_key'],
      ['template_params as an array', sendBody({ template_params: [PARAMS] }), 'template_params'],
      ['template_params as a string', sendBody({ template_params: 'name=Ada' }), 'template_params'],
      ['more than 20 attachments', sendBody({ attachments: Array.from({ length: 21 }, () => attachment) }), 'attachments'],
    ];
    it.skipIf(skip).each(cases)('%s', async (_name, body, field) => {
      await seedOrg(t.store);
      const err = expectError(await post(t, body), 400, 'invalid_body');
      const fields = (err.details?.fields ?? []) as Array<{ field: string; message: string }>;
      expect(fields.map((f) => f.field)).toContain(field);
      for (const f of fields) expect(f.message.length).toBeGreaterThan(0);
      await expectNothingTaken();
    });

    it.skipIf(skip)('lists every failing field of one request', async () => {
      await seedOrg(t.store);
      const err = expectError(
        await post(t, {
          template_id: 't'.repeat(65),
          user_id: 'u'.repeat(201),
          turnstile_key: 'x',
          template_params: [],
        }),
        400,
        'invalid_body',
      );
      const fields = new Set(((err.details?.fields ?? []) as Array<{ field: string }>).map((f) => f.field));
      for (const f of ['template_id', 'user_id', 'turnstile_key', 'template_params']) expect(fields).toContain(f);
      await expectNothingTaken();
    });

    it.skipIf(skip)('the body must be a JSON object', async () => {
      await seedOrg(t.store);
      for (const payload of ['[]', '"contact"', '42']) {
        const res = await post(t, payload, { ...bearer(), 'content-type': 'application/json' });
        expect(res.statusCode, res.body).toBe(400);
        expect(['invalid_body', 'bad_request']).toContain(res.json<{ error: { code: string } }>().error.code);
      }
      await expectNothingTaken();
    });
  });

  it.skipIf(skip)('unreadable JSON is 400 bad_request', async () => {
    await seedOrg(t.store);
    for (const payload of ['{"template_id":', '{template_id: "contact"}', '{"a":1}}']) {
      expectError(await post(t, payload, { ...bearer(), 'content-type': 'application/json' }), 400, 'bad_request');
    }
    await expectNothingTaken();
  });

  it.skipIf(skip)('a content type other than JSON is 400 bad_request', async () => {
    await seedOrg(t.store);
    const json = JSON.stringify(sendBody());
    expectError(await post(t, '<send/>', { ...bearer(), 'content-type': 'application/xml' }), 400, 'bad_request');
    expectError(
      await post(t, 'template_id=contact', { ...bearer(), 'content-type': 'application/x-www-form-urlencoded' }),
      400,
      'bad_request',
    );
    expectError(await post(t, json, { ...bearer(), 'content-type': 'application/octet-stream' }), 400, 'bad_request');
    await expectNothingTaken();
  });

  it.skipIf(skip)('a JSON text sent as text/plain is 400 bad_request (wrong content type), not a schema error', async () => {
    await seedOrg(t.store);
    expectError(await post(t, JSON.stringify(sendBody()), { ...bearer(), 'content-type': 'text/plain' }), 400, 'bad_request');
    await expectNothingTaken();
  });

  describe('service selection', () => {
    const twoServices = {
      services: [
        { id: 'outbox', provider: 'outbox' as const, default: true },
        { id: 'other', provider: 'outbox' as const },
      ],
    };

    it.skipIf(skip)('service_id omitted or default_service selects the default; another id selects that service', async () => {
      await seedOrg(t.store, twoServices);
      const omitted = expectAccepted(await post(t, sendBody()));
      expect(await serviceOf(omitted.message_id)).toBe('outbox');
      const byName = expectAccepted(await post(t, sendBody({ service_id: 'default_service' })));
      expect(await serviceOf(byName.message_id)).toBe('outbox');
      const other = expectAccepted(await post(t, sendBody({ service_id: 'other' })));
      expect(await serviceOf(other.message_id)).toBe('other');
    });

    it.skipIf(skip)("the template's linked service comes before the organization's default", async () => {
      const org = await seedOrg(t.store, twoServices);
      const contact = org.templates?.[0];
      if (contact === undefined) throw new Error('seed has no template');
      await seedOrg(t.store, { ...twoServices, templates: [contact, { ...contact, id: 'linked', service_id: 'other' }] });
      const omitted = expectAccepted(await post(t, sendBody({ template_id: 'linked' })));
      expect(await serviceOf(omitted.message_id)).toBe('other');
      const byName = expectAccepted(await post(t, sendBody({ template_id: 'linked', service_id: 'default_service' })));
      expect(await serviceOf(byName.message_id)).toBe('other');
      const explicit = expectAccepted(await post(t, sendBody({ template_id: 'linked', service_id: 'outbox' })));
      expect(await serviceOf(explicit.message_id)).toBe('outbox');
    });

    it.skipIf(skip)('unknown service_id is 404 service_not_found', async () => {
      await seedOrg(t.store);
      expectError(await post(t, sendBody({ service_id: 'nope' })), 404, 'service_not_found');
      await expectNothingTaken();
    });

    it.skipIf(skip)("another organization's service is 404 service_not_found", async () => {
      await seedOrg(t.store);
      await seedOrg(t.store, {
        id: 'beta',
        keys: [{ type: 'private', key: 'sk_beta_private_0001' }],
        services: [{ id: 'beta_only', provider: 'outbox', default: true }],
      });
      expectError(await post(t, sendBody({ service_id: 'beta_only' })), 404, 'service_not_found');
      await expectNothingTaken();
    });

    it.skipIf(skip)('unknown template is 404 template_not_found', async () => {
      await seedOrg(t.store);
      expectError(await post(t, sendBody({ template_id: 'nope' })), 404, 'template_not_found');
      // With a public key too (the lookup comes after the key and origin checks pass).
      expectError(
        await post(t, sendBody({ template_id: 'nope' }), { 'x-mail-public-key': PUBLIC_KEY }),
        404,
        'template_not_found',
      );
      await expectNothingTaken();
    });

    it.skipIf(skip)('no default service and none given is 404 service_not_found', async () => {
      await seedOrg(t.store, { services: [{ id: 'outbox', provider: 'outbox' }] });
      expectError(await post(t, sendBody()), 404, 'service_not_found');
      expectError(await post(t, sendBody({ service_id: 'default_service' })), 404, 'service_not_found');
      await expectNothingTaken();
      // Naming the service explicitly still works.
      expectAccepted(await post(t, sendBody({ service_id: 'outbox' })));
    });

    it.skipIf(skip)('a template linked to a deleted service is 422 service_unavailable_for_template', async () => {
      const org = await seedOrg(t.store, twoServices);
      const contact = org.templates?.[0];
      if (contact === undefined) throw new Error('seed has no template');
      await seedOrg(t.store, { ...twoServices, templates: [{ ...contact, service_id: 'other' }] });
      expect(await t.store.services.delete('acme', 'other')).toBe(true);
      expectError(await post(t, sendBody()), 422, 'service_unavailable_for_template');
      expectError(await post(t, sendBody({ service_id: 'default_service' })), 422, 'service_unavailable_for_template');
      await expectNothingTaken();
    });
  });
});
