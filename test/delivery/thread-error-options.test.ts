import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { DeliveryError, type OutgoingEmail } from '../../src/delivery/transport.js';
import { fromThreadError, toThreadError, TransportThread } from '../../src/delivery/transports/thread.js';
import type { Service } from '../../src/domain/types.js';
import { Closer, tempDir } from '../support/cleanup.js';
import { renderedEmail } from '../support/delivery.js';

const dist = (file: string) => pathToFileURL(fileURLToPath(new URL(`../../dist/src/delivery/${file}`, import.meta.url))).href;

/**
 * A host that fails every send the way a provider transport does on a 429 with Retry-After,
 * posting the failure with the same toThreadError the real host (thread-host.ts) uses, from the
 * compiled sources the real host runs.
 */
const THROTTLING_HOST = `
import { parentPort } from 'node:worker_threads';
import { DeliveryError } from '${dist('transport.js')}';
import { toThreadError } from '${dist('transports/thread.js')}';
parentPort.on('message', (m) => {
  if (m.op === 'shutdown' || m.op === 'close') parentPort.postMessage({ id: m.id, ok: true });
  if (m.op !== 'send') return;
  const error = m.mail.messageId === 'msg_plain'
    ? new Error('disk full')
    : new DeliveryError('temporary', 'postmark 429: Rate limit exceeded', ['a@example.com'], [], {
        retryAfterMs: 7000,
        throttled: true,
      });
  parentPort.postMessage({ id: m.id, ok: false, error: toThreadError(error) });
});
`;

const service: Service = {
  org_id: 'acme',
  id: 'pm',
  provider: 'postmark',
  is_default: true,
  max_per_second: null,
  version: 1,
  created_at: 0,
  updated_at: 0,
  settings: {},
};
const mail = (messageId: string): OutgoingEmail => ({
  messageId,
  headerMessageId: `<${messageId}@mailroom.test>`,
  email: renderedEmail(1),
  attachments: [],
});

describe('DeliveryError options across the transport thread', () => {
  const closer = new Closer();
  afterEach(async () => {
    await closer.closeAll();
  });

  it('retryAfterMs and throttled survive the worker-thread boundary', async () => {
    const dir = tempDir(closer);
    const host = path.join(dir, 'throttling-host.mjs');
    fs.writeFileSync(host, THROTTLING_HOST);
    const thread = new TransportThread(['postmark'], host);
    closer.defer(() => thread.close());
    const transport = thread.factories.postmark!(service, { dataDir: dir });
    const error = await transport.send(mail('msg_1')).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(DeliveryError);
    const d = error as DeliveryError;
    expect(d.kind).toBe('temporary');
    expect(d.message).toBe('postmark 429: Rate limit exceeded');
    expect(d.recipients).toEqual(['a@example.com']);
    expect(d.options).toEqual({ retryAfterMs: 7000, throttled: true });
    // Any other error still arrives as a plain Error (the worker retries it), without options.
    const plain = await transport.send(mail('msg_plain')).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(plain).toBeInstanceOf(Error);
    expect(plain).not.toBeInstanceOf(DeliveryError);
    expect((plain as Error).message).toBe('disk full');
  });

  it('an error without options arrives with empty options; only the known fields are posted', () => {
    const none = fromThreadError(structuredClone(toThreadError(new DeliveryError('service', 'auth failed'))));
    expect(none).toBeInstanceOf(DeliveryError);
    expect((none as DeliveryError).options).toEqual({});
    // A function cannot be cloned: options holding more than the known fields must not break the post.
    const withExtra = { retryAfterMs: 1000, extra: () => 1 };
    const odd = new DeliveryError('temporary', 'x', [], [], withExtra);
    const posted = structuredClone(toThreadError(odd));
    expect(posted.options).toEqual({ retryAfterMs: 1000 });
  });
});
