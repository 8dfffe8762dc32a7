import { afterEach, expect, it } from 'vitest';
import { freshAppEach, type TestApp } from '../support/app.js';
import { Closer } from '../support/cleanup.js';
import { startSink } from '../support/smtp-sink.js';
import { admin, createOrg } from '../support/admin.js';
import { expectError } from '../support/http.js';
import { describeDialects } from '../support/dialects.js';

/**
 * Issue 29: Test ran the saved settings, not the form. POST …/services/test takes the form's body
 * unsaved; a masked secret is the stored one only while its destination is unchanged, so an
 * edited host never receives the stored password (the attacker's case: the admin session of
 * someone who may edit settings but never see secrets).
 */
const smtpBody = (port: number, extra: Record<string, unknown> = {}) => ({
  provider: 'smtp',
  default: true,
  from_email: 'noreply@example.com',
  smtp: { host: '127.0.0.1', port, user: 'mailer', pass: 's3cret', ...extra },
});

describeDialects('POST /admin/v1/organizations/{org}/services/test (unsaved settings) on %s', (dialect, skip) => {
  let t!: TestApp;
  freshAppEach(dialect, skip, (app) => {
    t = app;
  });
  const closer = new Closer();
  afterEach(async () => {
    await closer.closeAll();
  });
  const testForm = (body: Record<string, unknown>) => admin(t, 'POST', '/organizations/acme/services/test', body);
  const saved = async (port: number) => {
    await createOrg(t);
    const res = await admin(t, 'PUT', '/organizations/acme/services/relay', smtpBody(port));
    expect(res.statusCode, res.body).toBe(201);
    return (await admin(t, 'GET', '/organizations/acme/services/relay')).json<Record<string, unknown>>();
  };

  it.skipIf(skip)('tests what the body says, not what is stored; the mask stands for the stored password', async () => {
    const sink = await startSink({ auth: { user: 'mailer', pass: 's3cret' } }, closer);
    const shown = await saved(sink.port);
    // An edit on screen (from_email) with the password as GET shows it: the stored one is used.
    const res = await testForm({ service: { ...shown, from_email: 'edited@example.com' }, to: 'ops@example.org' });
    expect(res.statusCode, res.body).toBe(200);
    // The check's AUTH and the test message's, both with the stored password.
    expect(sink.authAttempts).toEqual([
      { user: 'mailer', ok: true },
      { user: 'mailer', ok: true },
    ]);
    const parsed = await sink.parse(0);
    expect(parsed.from?.value[0]?.address).toBe('edited@example.com');
    // A wrong password typed in the form is what is tested (and fails), though the stored one works.
    const wrong = await testForm({ service: { ...shown, smtp: { ...(shown.smtp as object), pass: 'typo' } } });
    expect(expectError(wrong, 502, 'provider_error').details).toMatchObject({ reason: 'auth', stage: 'verify' });
    // Nothing was saved by either.
    expect((await t.store.services.get('acme', 'relay'))?.settings.from_email).toBe('noreply@example.com');
  });

  it.skipIf(skip)('a masked password with a changed host or port is a 400 naming it, and the new host gets nothing', async () => {
    const sink = await startSink({ auth: { user: 'mailer', pass: 's3cret' } }, closer);
    // The "attacker's" server: it would accept any AUTH and record it.
    const evil = await startSink({ auth: { user: 'mailer', pass: 'anything' } }, closer);
    const shown = await saved(sink.port);
    const smtp = shown.smtp as Record<string, unknown>;
    expect(smtp.pass).toBe('********');
    const moved = expectError(
      await testForm({ service: { ...shown, smtp: { ...smtp, port: evil.port } }, to: 'ops@example.org' }),
      400,
      'invalid_body',
    );
    expect(moved.details).toEqual({ fields: [{ field: 'smtp.pass', message: expect.stringContaining('smtp.port') }] });
    const otherUser = expectError(
      await testForm({ service: { ...shown, smtp: { ...smtp, user: 'someone' } } }),
      400,
      'invalid_body',
    );
    expect(otherUser.details).toMatchObject({ fields: [{ field: 'smtp.pass' }] });
    expect(evil.authAttempts).toEqual([]);
    expect(evil.received).toHaveLength(0);
    expect(evil.connections).toBe(0);
    expect(sink.authAttempts).toEqual([]);
  });

  it.skipIf(skip)('a new service (no id, or one not stored) must give its secrets; bad bodies are 400', async () => {
    const sink = await startSink({ auth: { user: 'mailer', pass: 's3cret' } }, closer);
    await createOrg(t);
    expect((await testForm({ service: smtpBody(sink.port) })).statusCode).toBe(200);
    expect(sink.authAttempts).toEqual([{ user: 'mailer', ok: true }]);
    const masked = expectError(
      await testForm({ service: { ...smtpBody(sink.port, { pass: '********' }), id: 'nope' } }),
      400,
      'invalid_body',
    );
    expect(masked.details).toEqual({ fields: [{ field: 'smtp.pass', message: 'is the mask of a password that is not stored' }] });
    expectError(await testForm({ service: { provider: 'smtp', default: true } }), 400, 'invalid_body');
    expectError(await testForm({ service: smtpBody(sink.port), extra: 1 }), 400, 'invalid_body');
    expectError(await admin(t, 'POST', '/organizations/ghost/services/test', { service: smtpBody(sink.port) }), 404, 'not_found');
  });
});
