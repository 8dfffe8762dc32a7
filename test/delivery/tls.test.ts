import { expect, it } from 'vitest';
import { deliveryHarness, row, seedSmtpOrg, send, smtpService } from '../support/delivery.js';
import { eventTypes } from '../support/stored.js';
import { describeDialects } from '../support/dialects.js';

/**
 * A broken TLS setup is the service's fault, like failed authentication: retrying cannot fix
 * it, so the message is held (held_service_error) until an operator changes the service.
 */
describeDialects('TLS failures against a real SMTP server on %s', (dialect, skip) => {
  const h = deliveryHarness(dialect);

  it.skipIf(skip)(
    'STARTTLS with a certificate the client cannot trust: held_service_error, the reason names the certificate',
    async () => {
      const { t, sink } = await h.smtpApp({ starttls: true });
      const { worker, metrics } = h.worker(t);
      const id = await send(t);

      expect(await worker.runOnce()).toBe(1);
      const m = await row(t.store, id);
      expect(m.status).toBe('held_service_error');
      expect(m.last_error).toMatch(/^TLS with 127\.0\.0\.1:\d+ \(secure: false\) failed: .*certificate/);
      expect(await eventTypes(t.store, id)).toEqual(['queued', 'sending', 'held_service_error']);
      expect(sink.dataAttempts).toHaveLength(0);
      expect(await metrics.registry.getSingleMetricAsString('mailroom_messages_deferred_total')).not.toMatch(/service="smtp"/);
    },
  );

  it.skipIf(skip)('secure: true against a plain SMTP port ("wrong version number"): held_service_error', async () => {
    const t = await h.app();
    const sink = await h.sink(t);
    await seedSmtpOrg(t.store, { ...smtpService(sink.port), smtp: { host: '127.0.0.1', port: sink.port, secure: true } });
    const { worker } = h.worker(t);
    const id = await send(t);

    expect(await worker.runOnce()).toBe(1);
    const m = await row(t.store, id);
    expect(m.status).toBe('held_service_error');
    expect(m.last_error).toMatch(/\(secure: true\) failed: .*wrong version number/);
    expect(sink.received).toHaveLength(0);
  });
});
