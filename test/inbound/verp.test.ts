import { describe, expect, it } from 'vitest';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  base32,
  openVerpToken,
  recipientDigest,
  splitVerpAddress,
  unbase32,
  verpAddress,
  verpSecret,
  verpToken,
} from '../../src/delivery/verp.js';
import { newId, newSortableId } from '../../src/domain/ids.js';
import { CONTACT_TEMPLATE, deliveryHarness, seedSmtpOrg, send, smtpService, view } from '../support/delivery.js';
import { smtpError } from '../support/smtp-sink.js';
import { describeDialects } from '../support/dialects.js';

const SECRET = 'test-verp-secret-0123456789abcdef';

describe('VERP tokens', () => {
  it('round-trips base32 and refuses other characters', () => {
    for (const n of [0, 1, 5, 22, 34]) {
      const bytes = Buffer.from(Array.from({ length: n }, (_, i) => (i * 37 + 11) & 255));
      expect(unbase32(base32(bytes))?.equals(bytes)).toBe(true);
    }
    expect(unbase32('abc!')).toBeUndefined();
  });

  it('names the message and recipient, survives case folding, fits a 64-character local part', () => {
    const id = newSortableId('msg', Date.now());
    const address = verpAddress(SECRET, 'Bounces.Example.COM', id, 'Ada@Example.org');
    expect(address).toMatch(/^bounce\+[a-z2-7]+@bounces\.example\.com$/);
    expect(address!.split('@')[0]!.length).toBeLessThanOrEqual(64);
    const split = splitVerpAddress(address!.toUpperCase());
    expect(split?.domain).toBe('bounces.example.com');
    const opened = openVerpToken(SECRET, split!.token);
    expect(opened?.messageId).toBe(id);
    expect(opened?.recipientDigest.equals(recipientDigest('ada@example.org'))).toBe(true);
    // Ids without the clock prefix too.
    const plain = newId('msg');
    expect(openVerpToken(SECRET, verpToken(SECRET, plain, 'a@b.test')!)?.messageId).toBe(plain);
    expect(verpToken(SECRET, 'not-ours', 'a@b.test')).toBeUndefined();
  });

  it('attacker: a token under another key, an altered byte, another recipient digest or a truncated token fails', () => {
    const id = newSortableId('msg', Date.now());
    const token = verpToken(SECRET, id, 'ada@example.org')!;
    expect(openVerpToken('another-secret-0123456789abcdefgh', token)).toBeUndefined();
    const flipped = token[3] === 'a' ? 'b' : 'a';
    expect(openVerpToken(SECRET, token.slice(0, 3) + flipped + token.slice(4))).toBeUndefined();
    const bytes = unbase32(token)!;
    bytes[bytes.length - 9] = bytes[bytes.length - 9]! ^ 1; // the recipient digest's last byte
    expect(openVerpToken(SECRET, base32(bytes))).toBeUndefined();
    expect(openVerpToken(SECRET, token.slice(0, 20))).toBeUndefined();
    expect(openVerpToken(SECRET, '')).toBeUndefined();
  });

  it('the secret: MAILROOM_VERP_SECRET when set, otherwise made once in the data dir and read back after a restart', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'verp-'));
    try {
      expect(verpSecret(dir, { MAILROOM_VERP_SECRET: SECRET })).toBe(SECRET);
      const first = verpSecret(dir, {});
      expect(first.length).toBeGreaterThanOrEqual(32);
      expect(verpSecret(dir, {})).toBe(first);
      expect(fs.statSync(path.join(dir, 'verp-secret')).mode & 0o077).toBe(0);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describeDialects('VERP envelope sender through a relay, on %s', (dialect, skip) => {
  const h = deliveryHarness(dialect);

  it.skipIf(skip)('one transaction per recipient, each with its own token; header From unchanged', async () => {
    const t = await h.app();
    const sink = await h.sink(t);
    await seedSmtpOrg(t.store, smtpService(sink.port, { bounce_domain: 'bounces.acme.test' }), {
      templates: [{ ...CONTACT_TEMPLATE, bcc: 'archive@acme.test' }],
    });
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'verp-'));
    h.closer.defer(async () => fs.rmSync(dataDir, { recursive: true, force: true }));
    const { worker } = h.worker(t, { dataDir });
    const id = await send(t);
    expect(await worker.runOnce()).toBe(1);
    const secret = verpSecret(dataDir, {});
    expect(sink.received).toHaveLength(3);
    const seen = new Map<string, string>();
    for (const r of sink.received) {
      expect(r.rcptTo).toHaveLength(1);
      const split = splitVerpAddress(r.mailFrom);
      expect(split?.domain).toBe('bounces.acme.test');
      const opened = openVerpToken(secret, split!.token);
      expect(opened?.messageId).toBe(id);
      expect(opened?.recipientDigest.equals(recipientDigest(r.rcptTo[0]!))).toBe(true);
      seen.set(r.rcptTo[0]!, r.mailFrom);
      expect(r.messageId).toBe(sink.received[0]!.messageId);
    }
    expect(new Set(seen.values()).size).toBe(3);
    const parsed = await sink.parse(0);
    expect(parsed.from?.value[0]?.address).not.toContain('bounce+');
  });

  it.skipIf(skip)(
    'one recipient refused for good, the other accepted: each settled on its own, as in one transaction',
    async () => {
      const t = await h.app();
      const sink = await h.sink(t, { rcpt: (a) => (a === 'audit@acme.test' ? smtpError(550, '5.1.1 No such user') : undefined) });
      await seedSmtpOrg(t.store, smtpService(sink.port, { bounce_domain: 'bounces.acme.test' }));
      const { worker } = h.worker(t);
      const id = await send(t);
      expect(await worker.runOnce()).toBe(1);
      expect(sink.received.map((r) => r.rcptTo)).toEqual([['owner@acme.test']]);
      const v = (await view(t, id)) as Awaited<ReturnType<typeof view>> & {
        recipients?: Array<{ address: string; state: string }>;
      };
      expect(v.status).toBe('sent');
      expect(Object.fromEntries((v.recipients ?? []).map((r) => [r.address, r.state]))).toEqual({
        'owner@acme.test': 'sent',
        'audit@acme.test': 'bounced',
      });
    },
  );

  it.skipIf(skip)('every recipient refused for now: the message is retried, none sent', async () => {
    const t = await h.app();
    const sink = await h.sink(t, { rcpt: () => smtpError(451, '4.2.1 Try later') });
    await seedSmtpOrg(t.store, smtpService(sink.port, { bounce_domain: 'bounces.acme.test' }));
    const { worker } = h.worker(t);
    const id = await send(t);
    expect(await worker.runOnce()).toBe(1);
    expect(sink.received).toHaveLength(0);
    expect((await view(t, id)).status).toBe('queued');
  });

  it.skipIf(skip)('a service without bounce_domain sends one transaction with the From address as envelope sender', async () => {
    const { t, sink } = await h.smtpApp();
    const { worker } = h.worker(t);
    await send(t);
    expect(await worker.runOnce()).toBe(1);
    expect(sink.received).toHaveLength(1);
    expect(sink.received[0]!.mailFrom).not.toContain('bounce+');
  });
});
