import { expect, it } from 'vitest';
import { ApiError } from '../../src/errors/api-error.js';
import { ERROR_CODES, type ErrorCode } from '../../src/errors/catalog.js';
import { REPLIES, replyFor } from '../../src/submission/replies.js';
import { closerPerTest } from '../support/cleanup.js';
import { describeDialects, freshStoreEach } from '../support/dialects.js';
import { seedOrg, PRIVATE_KEY } from '../support/seed.js';
import { dialogue, ONE_ENHANCED, plain, startSubmissionFor, stubPipeline } from '../support/submission.js';

/**
 * Raw reply lines of the submission listener (issue 28, L1): the EHLO extensions, and every
 * reply of a whole dialogue carrying exactly one enhanced status code, ours where the issue
 * names one (250 2.0.0 after DATA, not the library's 2.6.0).
 */
describeDialects('SMTP submission replies on %s', (dialect, skip) => {
  const c = closerPerTest();
  const t = freshStoreEach(dialect, skip, (s) => seedOrg(s.store));

  it.skipIf(skip)('EHLO lists SIZE, 8BITMIME, SMTPUTF8, PIPELINING, ENHANCEDSTATUSCODES and AUTH PLAIN LOGIN', async () => {
    const s = await startSubmissionFor({ ...t, closer: c, pipeline: stubPipeline(23_000_000) });
    const d = await dialogue(s.listener.port, c);
    expect(d.greeting[0]).toMatch(/^220 mailroom\.test ESMTP mailroom submission$/);
    const ehlo = (await d.command('EHLO client.test')).map((l) => l.slice(4));
    expect(ehlo).toEqual(
      expect.arrayContaining(['PIPELINING', '8BITMIME', 'SMTPUTF8', 'ENHANCEDSTATUSCODES', 'SIZE 23000000', 'AUTH PLAIN LOGIN']),
    );
    // No certificate: STARTTLS is not offered (never the library's built-in certificate); no DSN.
    expect(ehlo).not.toContain('STARTTLS');
    expect(ehlo.some((l) => l.startsWith('DSN'))).toBe(false);
  });

  it.skipIf(skip)('every reply of a dialogue has exactly one enhanced code, 250 2.0.0 Ok: queued as msg_…', async () => {
    const pipeline = stubPipeline();
    // The organization's limit under EHLO's SIZE: ours answers, not the library's server-wide check.
    pipeline.sizeLimit = () => 1000;
    pipeline.checkRecipient = async (_d, _c, address) => {
      if (address.startsWith('gone@')) throw new ApiError('recipient_suppressed', { message: `${address} is suppressed` });
    };
    const s = await startSubmissionFor({ ...t, closer: c, pipeline });
    const d = await dialogue(s.listener.port, c);
    await d.command('EHLO client.test');
    const replies = [
      await d.command('MAIL FROM:<a@acme.test>'),
      await d.command(`AUTH PLAIN ${plain('acme', 'sk_wrong')}`),
      await d.command(`AUTH PLAIN ${plain('acme', PRIVATE_KEY)}`),
      await d.command('MAIL FROM:<a@acme.test> SIZE=2000'),
      await d.command('MAIL FROM:<a@acme.test>'),
      await d.command('RCPT TO:<gone@example.org>'),
      await d.command('RCPT TO:<ok@example.org>'),
      await d.command('DATA'),
    ];
    d.write('From: a@acme.test\r\nSubject: hi\r\n\r\nHello\r\n.\r\n');
    const accepted = await d.reply();
    replies.push(accepted, await d.command('NOOP'), await d.command('RSET'), await d.command('QUIT'));
    const lines = replies.flat().filter((l) => !l.startsWith('354'));
    expect(lines.filter((l) => !ONE_ENHANCED.test(l))).toEqual([]);
    expect(replies[0]?.[0]).toMatch(/^530 5\.7\.0 /);
    expect(replies[1]?.[0]).toBe('535 5.7.8 Authentication credentials invalid');
    expect(replies[2]?.[0]).toMatch(/^235 2\.7\.0 /);
    expect(replies[3]?.[0]).toBe('552 5.3.4 Message size exceeds the limit for this organization (1000 bytes)');
    expect(replies[5]?.[0]).toBe('550 5.1.1 Recipient refused: gone@example.org is suppressed');
    expect(accepted).toEqual(['250 2.0.0 Ok: queued as msg_stub1']);
  });

  it.skipIf(skip)('a refusal of the send path keeps our code: 451 4.7.1, 452 4.3.1, 554 5.6.0 naming the parameter', async () => {
    const errors: ApiError[] = [
      new ApiError('rate_limited', { message: 'Too many requests for this organization; retry after 3 s.' }),
      new ApiError('insufficient_credits'),
      new ApiError('invalid_template_params', {
        details: { issues: [{ param: 'email', code: 'format', message: 'must be an e-mail address' }, { param: 'x' }] },
      }),
    ];
    const pipeline = stubPipeline();
    pipeline.accept = async () => {
      throw errors.shift();
    };
    const s = await startSubmissionFor({ ...t, closer: c, pipeline });
    const d = await dialogue(s.listener.port, c);
    await d.command('EHLO client.test');
    await d.command(`AUTH PLAIN ${plain('acme', PRIVATE_KEY)}`);
    const answers: string[] = [];
    for (let i = 0; i < 3; i++) {
      await d.command('MAIL FROM:<a@acme.test>');
      await d.command('RCPT TO:<ok@example.org>');
      await d.command('DATA');
      d.write('From: a@acme.test\r\n\r\nx\r\n.\r\n');
      answers.push(...(await d.reply()));
    }
    expect(answers).toEqual([
      '451 4.7.1 Too many requests for this organization; retry after 3 s.',
      '452 4.3.1 The organization has no credits left.',
      '554 5.6.0 Template parameter "email": must be an e-mail address (and 1 more)',
    ]);
  });

  it.skipIf(skip)(
    'bounded: MAILROOM_SUBMISSION_MAX_CLIENTS connections, MAILROOM_SUBMISSION_IDLE_SECONDS idle',
    { timeout: 20_000 },
    async () => {
      const env = { MAILROOM_SUBMISSION_MAX_CLIENTS: '1', MAILROOM_SUBMISSION_IDLE_SECONDS: '5' };
      const s = await startSubmissionFor({ ...t, closer: c, pipeline: stubPipeline(), env });
      const first = await dialogue(s.listener.port, c);
      // Instead of the greeting, which carries no enhanced code (RFC 2034 §3).
      expect((await dialogue(s.listener.port, c)).greeting).toEqual([
        '421 mailroom.test Too many connected clients, try again in a moment',
      ]);
      const started = Date.now();
      expect(await first.reply()).toEqual(['421 4.4.2 Timeout - closing connection']);
      expect(Date.now() - started).toBeGreaterThan(4_000);
    },
  );
});

it('has a reply for every error the send path can throw (the rest are 451 4.3.0)', () => {
  const none: ErrorCode[] = [
    'not_found',
    'message_not_found',
    'conflict',
    'internal_error',
    'provider_error',
    'service_unavailable',
  ];
  for (const code of ERROR_CODES) expect(REPLIES[code] === undefined, code).toBe(none.includes(code));
  expect(
    replyFor(new ApiError('invalid_body', { details: { reason: 'sender_not_allowed' }, message: 'Sender x' })).reply,
  ).toEqual({
    code: 550,
    enhanced: '5.7.1',
    text: 'Sender x',
  });
  expect(replyFor(new ApiError('invalid_recipient', { details: { reason: 'simulator_mixed' } })).reply.enhanced).toBe('5.7.1');
  expect(replyFor(Object.assign(new Error('x'), { code: 'SQLITE_FULL' })).reply).toMatchObject({ code: 451, enhanced: '4.3.0' });
  expect(replyFor(new Error('bug')).known).toBe(false);
});
