import { expect, it } from 'vitest';
import { describeDialects, freshStoreEach } from '../support/dialects.js';
import { seedOrg } from '../support/seed.js';

// Migration 0016 (SMTP submission, lead's L4): a submitted message's bytes in
// message_contents.mime, written with the message, read alone per attempt (the claim's SQL names its columns and leaves it out).

const BYTES = Buffer.from('From: a@acme.test\r\nSubject: s\r\n\r\n\u0000\u00ff every byte kept\r\n', 'latin1');

describeDialects('submitted bytes in storage on %s', (dialect, skip) => {
  const s = freshStoreEach(dialect, skip, (t) => seedOrg(t.store));

  const insert = (id: string, mime: Buffer | undefined) =>
    s.store.transaction(async (tx) => {
      await tx.messages.insert({
        id,
        org_id: 'acme',
        template_id: '@smtp',
        service_id: 'outbox',
        status: 'queued',
        status_token_hash: 'h',
        key_type: 'private',
        content: JSON.stringify({ submitted: true }),
        subject: 's',
        header_message_id: `<${id}@x.test>`,
        attachments: null,
        credit_taken: false,
        idempotency_key: null,
        recipients: [{ kind: 'to', email: 'ann@example.com' }],
        created_at: s.clock.now(),
        ...(mime !== undefined ? { mime } : {}),
      });
    });

  it.skipIf(skip)('written with the message, read back byte for byte; null for other messages', async () => {
    await insert('msg_submitted_1', BYTES);
    await insert('msg_api_1', undefined);
    expect((await s.store.messages.submittedMime('msg_submitted_1'))?.equals(BYTES)).toBe(true);
    expect(await s.store.messages.submittedMime('msg_api_1')).toBeUndefined();
    expect(await s.store.messages.submittedMime('msg_missing')).toBeUndefined();
  });
});
