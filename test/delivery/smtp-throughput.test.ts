import { afterEach, describe, expect, it } from 'vitest';
import { smtpTransport } from '../../src/delivery/transports/smtp.js';
import type { Service } from '../../src/domain/types.js';
import { Closer, tempDir } from '../support/cleanup.js';
import { renderedEmail } from '../support/delivery.js';
import { startSink } from '../support/smtp-sink.js';

/**
 * README, Performance, "Nagle on pooled SMTP sockets": with Nagle on, a pooled connection to
 * a loopback relay managed ~22 msg/s (110 over five); with TCP_NODELAY, several hundred. One connection must
 * exceed 100 msg/s. Sends go one after another, so the pool uses a single connection.
 */
describe('smtp transport throughput (regression: TCP_NODELAY on pooled sockets)', () => {
  const closer = new Closer();
  afterEach(async () => {
    await closer.closeAll();
  });

  it('one pooled connection to a loopback smtp-server exceeds 100 msg/s', async () => {
    const sink = await startSink({}, closer);
    const service: Service = {
      org_id: 'acme',
      id: 'smtp',
      provider: 'smtp',
      is_default: true,
      max_per_second: null,
      version: 1,
      created_at: 0,
      updated_at: 0,
      settings: { smtp: { host: '127.0.0.1', port: sink.port, secure: false, user: '', pass: '', dkim: null } },
    };
    const transport = smtpTransport(service, { dataDir: tempDir(closer) });
    closer.defer(() => transport.close());
    const sendOne = (i: number) =>
      transport.send({
        messageId: `msg_${i}`,
        headerMessageId: `<msg_${i}@mailroom.test>`,
        email: renderedEmail(i),
        attachments: [],
      });

    // Warm up: connection, greeting, EHLO, JIT.
    for (let i = 0; i < 20; i++) await sendOne(i);
    const n = 300;
    const started = performance.now();
    for (let i = 20; i < 20 + n; i++) await sendOne(i);
    const seconds = (performance.now() - started) / 1000;
    const rate = n / seconds;

    expect(sink.received).toHaveLength(20 + n);
    expect(sink.received.at(-1)?.messageId).toBe(`<msg_${19 + n}@mailroom.test>`);
    expect(sink.connections).toBe(1);
    expect(rate, `${rate.toFixed(0)} msg/s over one pooled connection`).toBeGreaterThan(100);
  });
});
