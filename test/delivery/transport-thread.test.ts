import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DeliveryError, type OutgoingEmail, type Transport } from '../../src/delivery/transport.js';
import { TransportThread } from '../../src/delivery/transports/thread.js';
import { TransportCache } from '../../src/delivery/transport-cache.js';
import type { Service } from '../../src/domain/types.js';
import { Closer, tempDir } from '../support/cleanup.js';
import { renderedEmail } from '../support/delivery.js';
import { smtpError, startSink } from '../support/smtp-sink.js';

function smtpService(port: number): Service {
  return {
    org_id: 'acme',
    id: 'smtp',
    provider: 'smtp',
    is_default: true,
    max_per_second: null,
    version: 1,
    created_at: 0,
    updated_at: 0,
    settings: { smtp: { host: '127.0.0.1', port, secure: false, user: '', pass: '', dkim: null } },
  };
}

const mail = (i: number, extra: Partial<OutgoingEmail> = {}): OutgoingEmail => ({
  messageId: `msg_${i}`,
  headerMessageId: `<msg_${i}@mailroom.test>`,
  email: renderedEmail(i),
  attachments: [],
  ...extra,
});

/**
 * A stand-in host for the thread: answers every send with the handle it was opened under, and
 * ends its thread (process.exit in a worker ends only the worker) on a message named `crash`.
 * It knows only handles opened in its own life, so a send after a restart succeeds only if the
 * main side opened the transport again.
 */
const CRASHING_HOST = `
import { parentPort } from 'node:worker_threads';
const open = new Set();
parentPort.on('message', (m) => {
  if (m.op === 'open') open.add(m.handle);
  if (m.op === 'shutdown' || m.op === 'close') parentPort.postMessage({ id: m.id, ok: true });
  if (m.op !== 'send') return;
  if (m.mail.messageId === 'crash') process.exit(3);
  if (!open.has(m.handle))
    parentPort.postMessage({ id: m.id, ok: false, error: { kind: 'temporary', message: 'not open', recipients: [] } });
  else parentPort.postMessage({ id: m.id, ok: true, receipt: { response: 'ok ' + m.handle } });
});
`;

describe('TransportThread: the built-in transports in a worker thread', () => {
  const closer = new Closer();
  afterEach(async () => {
    await closer.closeAll();
  });

  function threaded(file?: string): { thread: TransportThread; open: (service: Service) => Transport; dataDir: string } {
    const thread = file === undefined ? new TransportThread(['smtp', 'outbox']) : new TransportThread(['smtp'], file);
    closer.defer(() => thread.close());
    const dataDir = tempDir(closer);
    return {
      thread,
      dataDir,
      open: (service) => {
        const factory = thread.factories[service.provider];
        if (factory === undefined) throw new Error(`no factory for ${service.provider}`);
        return factory(service, { dataDir });
      },
    };
  }

  function crashingHost(): string {
    const host = path.join(tempDir(closer), 'crashing-host.mjs');
    fs.writeFileSync(host, CRASHING_HOST);
    return host;
  }

  it('sends through the thread to a real SMTP server, attachments byte for byte', async () => {
    const sink = await startSink({}, closer);
    const { open } = threaded();
    const transport = open(smtpService(sink.port));
    const bytes = Buffer.from([0, 1, 2, 250, 251, 252, 13, 10, 46, 13, 10]);
    const receipt = await transport.send(
      mail(1, { attachments: [{ filename: 'data.bin', contentType: 'application/octet-stream', content: bytes }] }),
    );
    expect(receipt.response).toMatch(/^250/);
    const parsed = await sink.parse(0);
    expect(parsed.messageId).toBe('<msg_1@mailroom.test>');
    expect(parsed.subject).toBe(renderedEmail(1).subject);
    expect(parsed.attachments).toHaveLength(1);
    expect(Buffer.compare(parsed.attachments[0]?.content ?? Buffer.alloc(0), bytes)).toBe(0);
  });

  it('a refusal crosses the thread as the same DeliveryError the worker classifies', async () => {
    const sink = await startSink({ rcpt: () => smtpError(550, '5.1.1 No such user here') }, closer);
    const { open } = threaded();
    const transport = open(smtpService(sink.port));
    const error = await transport.send(mail(2)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DeliveryError);
    expect((error as DeliveryError).kind).toBe('mailbox');
    expect((error as DeliveryError).recipients).toEqual([renderedEmail(2).to[0]?.address]);
    expect((error as DeliveryError).message).toMatch(/No such user/);
  });

  it('the outbox transport writes its file from the thread', async () => {
    const { open, dataDir } = threaded();
    const outbox = open({ ...smtpService(0), provider: 'outbox', settings: {} });
    const receipt = await outbox.send(mail(3));
    const file = /written to (.*)$/.exec(receipt.response)?.[1] ?? '';
    expect(fs.readFileSync(path.join(dataDir, file), 'utf8')).toContain('Message-ID: <msg_3@mailroom.test>');
    expect(path.basename(file)).toBe('msg_3.eml');
  });

  it('a service whose transport cannot be built is held on its own; the thread goes on serving the others', async () => {
    const { open } = threaded();
    // Valid JSON of the wrong shape (no `dkim`): nodemailer's options cannot be built from it.
    const broken = open({
      ...smtpService(1),
      id: 'broken',
      settings: { smtp: { host: '127.0.0.1', port: 1, secure: false, user: '', pass: '' } },
    });
    const outbox = open({ ...smtpService(0), provider: 'outbox', settings: {} });
    const error = await broken.send(mail(5)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DeliveryError);
    expect((error as DeliveryError).kind).toBe('service');
    expect((error as DeliveryError).message).toMatch(/acme\/broken cannot be built from its settings/);
    expect((await outbox.send(mail(6))).response).toMatch(/written to/);
    // Once more, after the broken one was tried: the thread is still the same, still serving.
    expect((await outbox.send(mail(7))).response).toMatch(/written to/);
  });

  it('after close, a late send is refused instead of starting a thread nobody would end', async () => {
    const { thread, open } = threaded();
    const outbox = open({ ...smtpService(0), provider: 'outbox', settings: {} });
    await outbox.send(mail(8));
    await thread.close();
    await expect(outbox.send(mail(9))).rejects.toThrow(/transport thread is closed/);
  });

  it('a dead thread fails the sends under way as plain errors; the next send reopens its transport in a new one', async () => {
    const { open } = threaded(crashingHost());
    const first = open(smtpService(1));
    const second = open(smtpService(2));
    expect((await first.send(mail(1))).response).toBe('ok 0');
    expect((await second.send(mail(2))).response).toBe('ok 1');

    const crashed = await first.send(mail(0, { messageId: 'crash' })).catch((e: unknown) => e);
    // Not a DeliveryError: the worker treats it as temporary and retries the message later.
    expect(crashed).toBeInstanceOf(Error);
    expect(crashed).not.toBeInstanceOf(DeliveryError);
    expect((crashed as Error).message).toMatch(/transport thread stopped/);

    expect((await second.send(mail(3))).response).toBe('ok 1');
    expect((await first.send(mail(4))).response).toBe('ok 0');
  });

  it('a closed transport is not reopened after a restart', async () => {
    const { open } = threaded(crashingHost());
    const kept = open(smtpService(1));
    const dropped = open(smtpService(2));
    await dropped.close();
    await kept.send(mail(0, { messageId: 'crash' })).catch(() => undefined);
    expect((await kept.send(mail(1))).response).toBe('ok 0');
    await expect(dropped.send(mail(2))).rejects.toThrow(/not open/);
  });
});

describe('TransportCache', () => {
  it("a factory that throws: its service's transport fails as the service's problem, the others untouched", async () => {
    const ok: Transport = { send: async () => ({ response: 'ok' }), close: async () => undefined };
    const cache = new TransportCache('/tmp', {
      smtp: (service) => {
        if (service.id === 'broken') throw new TypeError("Cannot read properties of undefined (reading 'domain_name')");
        return ok;
      },
    });
    const broken = cache.forService({ ...smtpService(1), id: 'broken' });
    const error = await broken?.send(mail(1)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DeliveryError);
    expect((error as DeliveryError).kind).toBe('service');
    // The cache wraps what the factory built (transport-cache.ts, Retirable): the same transport answers.
    expect((await cache.forService(smtpService(2))?.send(mail(2)))?.response).toBe('ok');
    await cache.close();
  });
});
