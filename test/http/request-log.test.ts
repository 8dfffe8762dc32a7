import { afterEach, beforeEach, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { buildServices } from '../../src/cli/runtime.js';
import { basic } from '../support/events/signing.js';
import { post, serviceWithEvents } from '../support/events/intake.js';
import { testConfig, type TestApp } from '../support/app.js';
import { freshStore } from '../support/stores.js';
import { describeDialects } from '../support/dialects.js';

/**
 * Issue 25 §7: the per-request log line kept the full path, so every POST to a service's events
 * URL wrote its token (a secret: it alone names the service) to the log at info level, wrong
 * tokens included. The app is built with a log stream the test reads, at level info.
 */
describeDialects('the request log line on %s', (dialect, skip) => {
  let t: TestApp;
  let lines: string[];

  beforeEach(async () => {
    if (skip) return;
    lines = [];
    const ts = await freshStore(dialect);
    const config = testConfig({ MAILROOM_LOG_LEVEL: 'info' });
    const services = buildServices(config, { store: ts.store, clock: ts.clock });
    const app = await buildApp({
      ...services,
      config,
      logStream: {
        write: (line) => {
          lines.push(line);
        },
      },
    });
    app.addHook('onClose', () => services.close());
    await app.ready();
    t = {
      ...ts,
      app,
      config,
      cleanup: async () => {
        await app.close();
        await ts.cleanup();
      },
    };
  });
  afterEach(async () => {
    if (!skip) await t.cleanup();
  });

  const requestLines = () =>
    lines.map((l) => JSON.parse(l) as { msg: string; path?: string; status?: number }).filter((l) => l.msg === 'request');

  it.skipIf(skip)('logs the events route with :token, for the right token and for wrong ones, and never the token', async () => {
    const eventsPath = await serviceWithEvents(t, 'pm', { source: 'postmark', username: 'hook', password: 'pm-secret-password' });
    const token = eventsPath.split('/').pop() ?? '';
    expect(token.length).toBeGreaterThanOrEqual(32);
    const body = JSON.stringify({ RecordType: 'Bounce', ID: 7, Type: 'HardBounce', MessageID: 'pm-7', Email: 'x@example.com' });
    const wrong = 'WrongTokenWrongTokenWrongToken12';
    expect((await post(t, eventsPath, body, basic('hook', 'pm-secret-password'))).statusCode).toBe(200);
    expect((await post(t, eventsPath, body, basic('hook', 'not-the-password'))).statusCode).toBe(401);
    expect((await post(t, `/v1/provider-events/${wrong}`, body)).statusCode).toBe(404);
    // A token sent to a route that does not exist: no route says which segment is the secret.
    expect((await post(t, `/v1/provider-events/${token}/extra`, body)).statusCode).toBe(404);

    const logged = requestLines().filter((l) => l.path?.startsWith('/v1/provider-events'));
    expect(logged.map((l) => [l.path, l.status])).toEqual([
      ['/v1/provider-events/:token', 200],
      ['/v1/provider-events/:token', 401],
      ['/v1/provider-events/:token', 404],
      ['/v1/provider-events/:masked/extra', 404],
    ]);
    const all = lines.join('\n');
    expect(all).not.toContain(token);
    expect(all).not.toContain(wrong);
  });

  it.skipIf(skip)('keeps query strings (status tokens, upload signatures) out, and the ids that help in', async () => {
    expect(
      (await t.app.inject({ method: 'GET', url: '/v1/messages/msg_nothing?token=st_SecretStatusToken0123456789abcdef' }))
        .statusCode,
    ).toBeGreaterThanOrEqual(400);
    expect(
      (
        await t.app.inject({
          method: 'PUT',
          url: '/v1/uploads/upl_x/content?expires=1&sig=SecretUploadSignature0123456789',
          payload: 'x',
        })
      ).statusCode,
    ).toBeGreaterThanOrEqual(400);
    const all = lines.join('\n');
    expect(all).not.toContain('SecretStatusToken');
    expect(all).not.toContain('SecretUploadSignature');
    expect(requestLines().map((l) => l.path)).toEqual(['/v1/messages/msg_nothing', '/v1/uploads/upl_x/content']);
  });
});
