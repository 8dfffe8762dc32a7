import { expect, it } from 'vitest';
import type { SendDeps } from '../../src/send/accept.js';
import { checkSubmissionRecipient } from '../../src/send/submission.js';
import { freshApp, type TestApp } from '../support/app.js';
import { closerPerTest } from '../support/cleanup.js';
import { describeDialects } from '../support/dialects.js';
import { bearer } from '../support/http.js';
import type { OrgInput } from '../support/orgs.js';
import { PRIVATE_KEY, PUBLIC_KEY, seedOrg } from '../support/seed.js';
import { messageCount } from '../support/stored.js';
import { deliveryRows, insertEndpoint } from '../support/webhooks/dispatch.js';
import { BASIC_HEADERS, callerOf, depsFor, message, refusal, submit, TEST_MODE_KEY } from '../support/submission.js';

// acceptSubmission and checkSubmissionRecipient (src/send/submission.ts) on both databases: a
// submitted message becomes a message like an API send's, refused as the API refuses.

const countMessages = (t: TestApp): Promise<number> => messageCount(t);

describeDialects('SMTP submission acceptance on %s', (dialect, skip) => {
  const closer = closerPerTest();
  const setup = async (org: Partial<OrgInput> = {}): Promise<{ t: TestApp; deps: SendDeps }> => {
    const t = await freshApp(dialect);
    closer.defer(() => t.cleanup());
    await seedOrg(t.store, {
      keys: [
        { type: 'public', key: PUBLIC_KEY },
        { type: 'private', key: PRIVATE_KEY },
        { type: 'private', key: TEST_MODE_KEY, mode: 'test' },
      ],
      services: [{ id: 'outbox', provider: 'outbox', default: true, from_email: 'noreply@acme.test' }],
      ...org,
    });
    return { t, deps: depsFor(t, closer) };
  };

  it.skipIf(skip)('stores a message: @smtp in history, status token, first event, webhook row, bytes minus Bcc', async () => {
    const { t, deps } = await setup();
    await insertEndpoint(t.store, { id: 'hook', url: 'http://127.0.0.1:9/hook', secret: 'whsec_test_0123456789' }, t.clock.now());
    const mime = message([
      ...BASIC_HEADERS,
      'Bcc: Hidden <hidden@example.net>,\r\n other@example.net',
      'X-Mailroom-Service: outbox',
    ]);
    const caller = await callerOf(t.store, PRIVATE_KEY);
    const accepted = await submit(deps, caller, mime, ['ann@example.com', 'hidden@example.net']);
    expect(accepted).toEqual({ messageId: expect.stringMatching(/^msg_/), status: 'queued', replayed: false });

    const res = await t.app.inject({ method: 'GET', url: '/v1/history', headers: bearer(PRIVATE_KEY) });
    const items = res.json<{ items: Array<{ message_id: string; template_id: string }> }>().items;
    expect(items).toEqual([expect.objectContaining({ message_id: accepted.messageId, template_id: '@smtp' })]);
    const row = await t.store.messages.get('acme', accepted.messageId);
    expect(row?.status_token_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(row?.header_message_id).toBe('<first@app.acme.test>');
    expect((await t.store.messages.events(accepted.messageId)).map((e) => e.type)).toEqual(['queued']);
    expect((await deliveryRows(t.store)).map((d) => d.message_id)).toEqual([accepted.messageId]);
    const recipients = await t.store.messages.recipientsOf({ id: accepted.messageId, status: 'queued' });
    expect(recipients.map((r) => [r.kind, r.address])).toEqual([
      ['to', 'ann@example.com'],
      ['to', 'hidden@example.net'],
    ]);
    const stored = await t.store.messages.submittedMime(accepted.messageId);
    expect(stored?.equals(message(BASIC_HEADERS))).toBe(true);
    expect(await t.store.messages.submittedMime('msg_none')).toBeUndefined();
  });

  it.skipIf(skip)('no Message-ID: ours is added (and Date when missing); same Message-ID twice is one message', async () => {
    const { t, deps } = await setup();
    const caller = await callerOf(t.store, PRIVATE_KEY);
    const bare = message(['From: app@acme.test', 'Subject: none']);
    const a = await submit(deps, caller, bare);
    const row = await t.store.messages.get('acme', a.messageId);
    expect(row?.header_message_id).toBe(`<${a.messageId}@mailroom.test>`);
    const stored = (await t.store.messages.submittedMime(a.messageId))?.toString('latin1') ?? '';
    expect(stored).toMatch(
      new RegExp(`^Message-ID: <${a.messageId}@mailroom\\.test>\\r\\nDate: [A-Z][a-z]{2}, .* \\+0000\\r\\n`),
    );
    expect(stored.endsWith(bare.toString('latin1'))).toBe(true);
    const blank = await submit(
      deps,
      caller,
      message(['From: app@acme.test', 'Message-ID: ', 'Date: Thu, 05 Mar 2026 10:00:00 +0000']),
    );
    const blankBytes = (await t.store.messages.submittedMime(blank.messageId))?.toString('latin1') ?? '';
    expect(blankBytes.match(/^message-id:/gim)).toEqual(['Message-ID:']);
    expect(blankBytes).toContain(`Message-ID: <${blank.messageId}@mailroom.test>\r\nFrom: app@acme.test\r\nDate:`);
    // Without a Message-ID there is no idempotency: a second copy is a second message.
    expect((await submit(deps, caller, bare)).messageId).not.toBe(a.messageId);

    const first = await submit(deps, caller, message(BASIC_HEADERS));
    const again = await submit(deps, caller, message([...BASIC_HEADERS, 'X-Retry: 1']), ['other@example.com']);
    expect(again).toEqual({ messageId: first.messageId, status: 'queued', replayed: true });
    expect(await countMessages(t)).toBe(4);
  });

  it.skipIf(skip)('template mode renders to the envelope; a bad parameter names it; Params must be an object', async () => {
    const { t, deps } = await setup();
    const caller = await callerOf(t.store, PRIVATE_KEY);
    const params = JSON.stringify({ name: 'Ann', email: 'ann@example.com', message: 'Hello via template' });
    const head = ['From: whoever@elsewhere.test', 'Message-ID: <tpl@app.acme.test>', 'X-Mailroom-Template: contact'];
    const a = await submit(deps, caller, message([...head, `X-Mailroom-Params: ${params}`]), ['bob@example.com']);
    const row = await t.store.messages.get('acme', a.messageId);
    expect(row?.template_id).toBe('contact');
    expect(row?.header_message_id).toBe('<tpl@app.acme.test>');
    const content = JSON.parse((await t.store.messages.content(a.messageId))?.content ?? '{}');
    expect(content).toMatchObject({
      subject: 'Message from Ann',
      text: 'Hello via template',
      to: [{ address: 'bob@example.com' }],
    });
    expect(await t.store.messages.submittedMime(a.messageId)).toBeUndefined();

    const bad = JSON.stringify({ name: 'Ann', email: 'not-an-address', message: 'x' });
    const r = await refusal(submit(deps, caller, message([head[0] ?? '', head[2] ?? '', `X-Mailroom-Params: ${bad}`])));
    expect(r.code).toBe('invalid_template_params');
    expect(r.message).toMatch(/^Template parameter "email": /);
    const notObject = await refusal(submit(deps, caller, message([head[0] ?? '', head[2] ?? '', 'X-Mailroom-Params: [1]'])));
    expect(notObject).toMatchObject({ code: 'invalid_body', reason: 'template_headers' });
    const unknown = await refusal(submit(deps, caller, message([head[0] ?? '', 'X-Mailroom-Template: nope'])));
    expect(unknown.code).toBe('template_not_found');
  });

  it.skipIf(skip)(
    "template mode: Params read as written; the envelope replaces the template's own To and Cc, dynamic ones too",
    async () => {
      const contact: NonNullable<OrgInput['templates']>[number] = {
        id: 'contact',
        subject: 'Message from {{name}}',
        to: 'owner@acme.test',
        from_email: 'noreply@acme.test',
        text: '{{message}}',
        params: [
          { name: 'name', type: 'string', required: true },
          { name: 'email', type: 'email', required: true },
          { name: 'message', type: 'string', required: true },
        ],
      };
      const dynamic = { ...contact, id: 'dynamic', to: '{{email}}', cc: '{{name}}@cc.test' };
      const { t, deps } = await setup({ templates: [contact, dynamic] });
      const caller = await callerOf(t.store, PRIVATE_KEY);
      // Two spaces, and text that merely looks like an RFC 2047 word: JSON's own, kept as they are.
      const params = JSON.stringify({ name: 'Ann', email: 'ann@example.com', message: 'two  spaces =?utf-8?q?hi?=' });
      const head = (id: string, n: number) => [
        'From: a@acme.test',
        `Message-ID: <tpl-${n}@app.acme.test>`,
        `X-Mailroom-Template: ${id}`,
      ];
      const send = async (id: string, n: number, recipients: string[]) => {
        const a = await submit(deps, caller, message([...head(id, n), `X-Mailroom-Params: ${params}`]), recipients);
        return JSON.parse((await t.store.messages.content(a.messageId))?.content ?? '{}');
      };
      const first = await send('contact', 1, ['ann@example.com', 'bob@example.com']);
      expect(first).toMatchObject({
        subject: 'Message from Ann',
        text: 'two  spaces =?utf-8?q?hi?=',
        to: [{ address: 'ann@example.com' }, { address: 'bob@example.com' }],
        cc: [],
        bcc: [],
      });
      // The template's own To/Cc, dynamic and without allow_dynamic_recipients, are not the envelope's.
      expect(await send('dynamic', 3, ['dora@example.com'])).toMatchObject({ to: [{ address: 'dora@example.com' }], cc: [] });
    },
  );

  it.skipIf(skip)('a From that is no address is malformed, with or without the service sender rule', async () => {
    const { t, deps } = await setup({ services: [{ id: 'outbox', provider: 'outbox', default: true }] });
    const caller = await callerOf(t.store, PRIVATE_KEY);
    for (const from of ['a@', 'a@b..com', 'Ann <ann@>']) {
      const r = await refusal(submit(deps, caller, message([`From: ${from}`, 'Subject: s'])));
      expect(r).toMatchObject({
        code: 'invalid_body',
        reason: 'malformed_message',
        message: 'Malformed message: From is not an address.',
      });
    }
    expect(await countMessages(t)).toBe(0);
    await submit(deps, caller, message(['From: a@elsewhere.test', 'Subject: s']));
    expect(await countMessages(t)).toBe(1);
  });

  it.skipIf(skip)('sender rule L7, malformed messages, attachments on the plan', async () => {
    const { t, deps } = await setup({ plan: 'free' });
    const caller = await callerOf(t.store, PRIVATE_KEY);
    // The free plan's rate limit counts each submission (a private-key send): a second apart.
    const go = (mime: Buffer) => {
      t.clock.advance(1000);
      return submit(deps, caller, mime);
    };
    await go(message(['From: a@mail.acme.test', 'Subject: sub-domain']));
    const other = await refusal(go(message(['From: a@evil.test', 'Subject: s'])));
    expect(other).toMatchObject({ code: 'invalid_body', reason: 'sender_not_allowed' });
    expect(other.message).toContain('a@evil.test');
    const lookalike = await refusal(go(message(['From: a@notacme.test'])));
    expect(lookalike.reason).toBe('sender_not_allowed');
    expect((await refusal(go(message(['Subject: no from'])))).reason).toBe('malformed_message');
    expect((await refusal(go(message(['From: a@acme.test, b@acme.test'])))).reason).toBe('malformed_message');
    const pdf = message(
      ['From: a@acme.test', 'Content-Type: multipart/mixed; boundary="b"'],
      '--b\r\nContent-Type: text/plain\r\n\r\nhi\r\n--b\r\nContent-Type: application/pdf; name="a.pdf"\r\n\r\n%PDF\r\n--b--\r\n',
    );
    expect(await refusal(go(pdf))).toMatchObject({ code: 'attachments_not_allowed', reason: 'plan' });
    const big = message(['From: a@acme.test'], `${'x'.repeat(998)}\r\n`.repeat(330));
    expect(await refusal(go(big))).toMatchObject({ code: 'payload_too_large', reason: 'message_size' });
    expect(await countMessages(t)).toBe(1);
  });

  it.skipIf(skip)('credits: reject mode refuses, hold mode holds; a test key takes none', async () => {
    const reject = await setup({ credits: 0, when_out_of_credits: 'reject' });
    const caller = await callerOf(reject.t.store, PRIVATE_KEY);
    expect((await refusal(submit(reject.deps, caller, message(BASIC_HEADERS)))).code).toBe('insufficient_credits');
    const testCaller = await callerOf(reject.t.store, TEST_MODE_KEY);
    expect((await submit(reject.deps, testCaller, message(BASIC_HEADERS))).status).toBe('queued');
    const hold = await setup({ credits: 0, when_out_of_credits: 'hold' });
    const held = await submit(hold.deps, await callerOf(hold.t.store, PRIVATE_KEY), message(BASIC_HEADERS));
    expect(held.status).toBe('held');
    expect((await hold.t.store.messages.get('acme', held.messageId))?.status).toBe('held');
  });

  it.skipIf(skip)('RCPT TO: suppressed, blocked, braces, unknown simulator, live mixing are refused; others pass', async () => {
    const { t, deps } = await setup({ security: { block_list: { list: ['@blocked.test'] } } });
    await t.store.suppressions.add('acme', 'Gone@Example.com', 'manual', t.clock.now());
    const caller = await callerOf(t.store, PRIVATE_KEY);
    const check = (address: string, accepted: string[] = []) => checkSubmissionRecipient(deps, caller, address, accepted);
    await check('ann@example.com');
    expect((await refusal(check('gone@example.com'))).code).toBe('recipient_suppressed');
    expect((await refusal(check('x@blocked.test'))).code).toBe('recipient_blocked');
    expect(await refusal(check('{{to}}@example.com'))).toMatchObject({ code: 'invalid_recipient', reason: 'syntax' });
    expect(await refusal(check('not an address'))).toMatchObject({ code: 'invalid_recipient', reason: 'syntax' });
    expect((await refusal(check('nosuch@simulator.mailroom.test'))).reason).toBe('unknown_simulator_address');
    expect((await refusal(check('delivered@simulator.mailroom.test', ['ann@example.com']))).reason).toBe('simulator_mixed');
    await check('delivered@simulator.mailroom.test', ['bounce@simulator.mailroom.test']);
    expect((await refusal(check('suppressed@simulator.mailroom.test'))).code).toBe('recipient_suppressed');
    // A test key may mix (nothing of it leaves).
    await checkSubmissionRecipient(deps, await callerOf(t.store, TEST_MODE_KEY), 'delivered@simulator.mailroom.test', [
      'ann@x.test',
    ]);
  });
});
