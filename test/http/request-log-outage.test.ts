import { sql } from 'kysely';
import { Registry } from 'prom-client';
import { expect, it } from 'vitest';
import { requestRecorderOf } from '../../src/http/refused-requests.js';
import { RequestRecorder } from '../../src/http/request-recorder.js';
import { freshAppEach, type TestApp } from '../support/app.js';
import { databaseOf } from '../support/db.js';
import { describeDialects } from '../support/dialects.js';
import { expectError } from '../support/http.js';
import { PRIVATE_KEY, seedOrg } from '../support/seed.js';
import { freshStore } from '../support/stores.js';

/**
 * Issue 29: writing the request log never slows or fails the answer. With the table gone (a
 * broken schema) and with the whole store closed, refused requests are answered as ever, the
 * flush resolves, the dropped rows are counted in mailroom_request_log_dropped_total, and no
 * rejection escapes (vitest fails a run on an unhandled one).
 */

async function droppedBy(registry: Registry, reason: string): Promise<number> {
  const metric = registry.getSingleMetric('mailroom_request_log_dropped_total');
  const values = (await metric?.get())?.values ?? [];
  return values.find((v) => v.labels.reason === reason)?.value ?? 0;
}

interface Lines {
  lines: Array<{ msg: string; rows?: number }>;
}

describeDialects('request log under storage failure on %s', (dialect, skip) => {
  let t!: TestApp;
  freshAppEach(dialect, skip, async (app) => {
    t = app;
    await seedOrg(t.store);
  });

  it.skipIf(skip)('with its table gone, refusals are answered as before and the rows are counted as dropped', async () => {
    await sql`drop table request_log`.execute(databaseOf(t.store));
    for (let i = 0; i < 3; i++) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/v1/send',
        payload: { template_id: 'missing', template_params: {} },
        headers: { authorization: `Bearer ${PRIVATE_KEY}` },
      });
      expectError(res, 404, 'template_not_found');
    }
    await expect(requestRecorderOf(t.app)?.flush()).resolves.toBeUndefined();
    const metrics = await t.app.inject({ method: 'GET', url: '/metrics' });
    expect(metrics.body).toMatch(/mailroom_request_log_dropped_total\{reason="storage"\} 3/);
    // Another request after the failure is answered too.
    const again = await t.app.inject({
      method: 'GET',
      url: '/v1/messages/msg_nope',
      headers: { authorization: `Bearer ${PRIVATE_KEY}` },
    });
    expect(again.statusCode).toBe(404);
  });
});

describeDialects('request log over a closed store on %s', (dialect, skip) => {
  it.skipIf(skip)('record never throws, flush and close resolve, one warning for the spell', async () => {
    const ts = await freshStore(dialect);
    await ts.store.close();
    const registry = new Registry();
    const logged: Lines = { lines: [] };
    const logger = {
      warn: (obj: object, msg: string) => logged.lines.push({ msg, ...obj }),
      info: (obj: object, msg: string) => logged.lines.push({ msg, ...obj }),
    };
    const recorder = new RequestRecorder({ store: ts.store, clock: ts.clock, logger, registry });
    const row = {
      org_id: 'acme',
      key_id: 'key_1',
      method: 'POST',
      route: '/v1/send',
      status: 422,
      code: 'invalid_template_params',
      message: 'm',
      fields: '{}',
      ip: null,
    };
    for (let i = 0; i < 5; i++) expect(() => recorder.record(row)).not.toThrow();
    await expect(recorder.flush()).resolves.toBeUndefined();
    recorder.record(row);
    await expect(recorder.close()).resolves.toBeUndefined();
    expect(await droppedBy(registry, 'storage')).toBe(6);
    expect(logged.lines.filter((l) => l.msg === 'request log write failed: rows dropped')).toHaveLength(1);
    await ts.cleanup().catch(() => undefined);
  });
});
