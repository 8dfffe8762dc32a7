import https from 'node:https';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import emailjs, { EmailJSResponseStatus } from '@emailjs/nodejs';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { freshApp, type TestApp } from '../support/app.js';
import { PRIVATE_KEY, PUBLIC_KEY, seedOrg } from '../support/seed.js';
import { messageRows } from '../support/db.js';
import { messageCount } from '../support/stored.js';
import { PARAMS } from '../support/send.js';
import { describeDialects } from '../support/dialects.js';

/**
 * The SDK always calls `https.request({ host: 'api.emailjs.com', port: 443, … })` without an
 * agent, so it uses `https.globalAgent`. This agent keeps the `https:` protocol the request
 * checks for, but hands back a plain TCP socket to the test server, which speaks plain HTTP:
 * the request writes HTTP/1.1 on whatever socket its agent returns.
 */
class LoopbackAgent extends https.Agent {
  readonly connections: Array<{ host: string | null | undefined; port: number | string | null | undefined }> = [];

  constructor(private readonly port: number) {
    super({ keepAlive: false });
  }

  override createConnection(options: https.RequestOptions): Duplex {
    this.connections.push({ host: options.host, port: options.port });
    return net.connect(this.port, '127.0.0.1');
  }
}

interface ErrorEnvelope {
  error: { code: string; message: string; docs_url: string };
}

describeDialects('the real @emailjs/nodejs SDK against a running server on %s', (dialect, skip) => {
  let t: TestApp;
  let agent: LoopbackAgent;
  const originalAgent = https.globalAgent;

  beforeEach(async () => {
    if (skip) return;
    t = await freshApp(dialect);
    await seedOrg(t.store);
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    agent = new LoopbackAgent((t.app.server.address() as AddressInfo).port);
    https.globalAgent = agent;
  });
  afterEach(async () => {
    https.globalAgent = originalAgent;
    if (skip) return;
    agent.destroy();
    await t.cleanup();
  });

  it.skipIf(skip)(
    'send with a public and a private key resolves { status: 200, text: "OK" } and stores the message',
    async () => {
      const result = await emailjs.send(
        'default_service',
        'contact',
        { ...PARAMS },
        { publicKey: PUBLIC_KEY, privateKey: PRIVATE_KEY },
      );
      expect(result).toBeInstanceOf(EmailJSResponseStatus);
      expect({ status: result.status, text: result.text }).toEqual({ status: 200, text: 'OK' });
      // The SDK really went through our agent, aimed at EmailJS's own host and port.
      expect(agent.connections).toEqual([{ host: 'api.emailjs.com', port: 443 }]);

      expect(await messageCount(t)).toBe(1);
      const [row] = await messageRows(t.store, 'acme');
      expect(row?.status).toBe('queued');
      expect(row?.template_id).toBe('contact');
      expect(row?.service_id).toBe('outbox');
      // Both keys were in the body: the private one wins.
      expect(row?.key_type).toBe('private');
      expect(row?.subject).toBe(`Message from ${PARAMS.name}`);
      expect((await t.store.organizations.get('acme'))?.credits).toBe(99);
    },
  );

  it.skipIf(skip)('send with a public key only resolves too (the organization allows mobile apps)', async () => {
    const result = await emailjs.send('default_service', 'contact', { ...PARAMS }, { publicKey: PUBLIC_KEY });
    expect({ status: result.status, text: result.text }).toEqual({ status: 200, text: 'OK' });
    const [row] = await messageRows(t.store, 'acme');
    expect({ key_type: row?.key_type, status: row?.status }).toEqual({ key_type: 'public', status: 'queued' });
  });

  it.skipIf(skip)('naming the service by id works as well', async () => {
    const result = await emailjs.send('outbox', 'contact', { ...PARAMS }, { publicKey: PUBLIC_KEY });
    expect(result.status).toBe(200);
    expect(await messageCount(t)).toBe(1);
  });

  it.skipIf(skip)('a failing send rejects with the status and our JSON error envelope as text', async () => {
    const failure: unknown = await emailjs
      .send('default_service', 'nope', { ...PARAMS }, { publicKey: PUBLIC_KEY, privateKey: PRIVATE_KEY })
      .then(
        () => undefined,
        (err: unknown) => err,
      );
    expect(failure).toBeInstanceOf(EmailJSResponseStatus);
    const status = failure as EmailJSResponseStatus;
    expect(status.status).toBe(404);
    const envelope = JSON.parse(status.text) as ErrorEnvelope;
    expect(envelope.error.code).toBe('template_not_found');
    expect(envelope.error.message.length).toBeGreaterThan(0);
    expect(envelope.error.docs_url).toMatch(/#template-not-found$/);
    expect(await messageCount(t)).toBe(0);
  });

  it.skipIf(skip)('invalid template parameters reject with 422 invalid_template_params', async () => {
    const failure: unknown = await emailjs.send('default_service', 'contact', { name: 'Ada' }, { publicKey: PUBLIC_KEY }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(failure).toBeInstanceOf(EmailJSResponseStatus);
    const status = failure as EmailJSResponseStatus;
    expect(status.status).toBe(422);
    expect((JSON.parse(status.text) as ErrorEnvelope).error.code).toBe('invalid_template_params');
  });

  it.skipIf(skip)('an unknown public key rejects with 401 invalid_public_key', async () => {
    const failure: unknown = await emailjs
      .send('default_service', 'contact', { ...PARAMS }, { publicKey: 'pk_nobody_00000000' })
      .then(
        () => undefined,
        (err: unknown) => err,
      );
    const status = failure as EmailJSResponseStatus;
    expect(status.status).toBe(401);
    expect((JSON.parse(status.text) as ErrorEnvelope).error.code).toBe('invalid_public_key');
  });
});
