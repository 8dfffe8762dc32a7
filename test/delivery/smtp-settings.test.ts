import { describe, expect, it } from 'vitest';
import { readSmtpSettings } from '../../src/delivery/smtp-settings.js';
import { ADMIN_TOKEN } from '../support/app.js';
import { deliveryHarness, row, send, view } from '../support/delivery.js';
import { describeDialects } from '../support/dialects.js';

const STORED = { host: 'smtp.example.com', port: 587, secure: false, user: 'mailer', pass: 'secret', dkim: null };

describe("readSmtpSettings: settings.smtp as stored, by the admin API's rules", () => {
  it('reads what serviceFields writes, with or without DKIM; no smtp block is no settings', () => {
    expect(readSmtpSettings({ smtp: STORED })).toEqual({ ok: true, smtp: STORED });
    const dkim = { domain_name: 'example.com', key_selector: 's1', private_key: '-----BEGIN PRIVATE KEY-----' };
    expect(readSmtpSettings({ smtp: { ...STORED, dkim } })).toEqual({ ok: true, smtp: { ...STORED, dkim } });
    expect(readSmtpSettings({})).toEqual({ ok: true, smtp: undefined });
  });

  it('refuses what the admin API would refuse, naming each field (at most three)', () => {
    expect(readSmtpSettings({ smtp: { ...STORED, port: 70_000 } })).toEqual({
      ok: false,
      problem: expect.stringMatching(/^smtp\.port: /),
    });
    expect(readSmtpSettings({ smtp: { ...STORED, host: '' } })).toEqual({
      ok: false,
      problem: expect.stringMatching(/^smtp\.host: /),
    });
    expect(readSmtpSettings({ smtp: { ...STORED, dkim: { domain_name: 'example.com' } } })).toMatchObject({
      ok: false,
      problem: expect.stringMatching(/^smtp\.dkim: /),
    });
    // A row from before the defaults were filled in (no dkim field) is not what the transport reads.
    const { dkim: _unset, ...noDkim } = STORED;
    expect(readSmtpSettings({ smtp: noDkim })).toMatchObject({ ok: false, problem: expect.stringMatching(/^smtp\.dkim: /) });
    expect(readSmtpSettings({ smtp: 'smtp://relay' })).toMatchObject({ ok: false });
    const many = readSmtpSettings({ smtp: { host: 1, port: 'x', secure: 'no', user: 2, pass: 3, dkim: 4 } });
    expect(many.ok ? '' : many.problem.split('; ')).toHaveLength(3);
  });
});

describeDialects('a service whose stored smtp settings fail the check on %s', (dialect, skip) => {
  const h = deliveryHarness(dialect);

  it.skipIf(skip)(
    'is held (held_service_error naming the field), like an unreadable row; written again → queued → sent',
    async () => {
      const { t, sink } = await h.smtpApp();
      const { worker } = h.worker(t);
      const id = await send(t);
      // Valid JSON the admin API would have refused: a port out of range.
      await t.store.transaction((tx) =>
        tx.services.put(
          'acme',
          'smtp',
          {
            provider: 'smtp',
            is_default: true,
            max_per_second: null,
            settings: { smtp: { host: '127.0.0.1', port: 0, secure: false, user: '', pass: '', dkim: null } },
          },
          t.clock.now(),
        ),
      );

      expect(await worker.runOnce()).toBe(1);
      const held = await view(t, id);
      expect(held.status).toBe('held_service_error');
      expect(String(held.events.at(-1)?.details?.reason)).toMatch(
        /stored settings cannot be read \(smtp\.port: .*\); write the service again/,
      );
      expect(sink.received).toHaveLength(0);

      const put = await t.app.inject({
        method: 'PUT',
        url: '/admin/v1/organizations/acme/services/smtp',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
        payload: { provider: 'smtp', default: true, smtp: { host: '127.0.0.1', port: sink.port, secure: false } },
      });
      expect(put.statusCode, put.body).toBe(200);
      expect((await row(t.store, id)).status).toBe('queued');
      expect(await worker.runOnce()).toBe(1);
      expect((await row(t.store, id)).status).toBe('sent');
      expect(sink.received).toHaveLength(1);
    },
  );
});
