import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { simpleParser } from 'mailparser';
import { afterEach, expect, it } from 'vitest';
import { LocalPacer } from '../../src/delivery/pacing.js';
import { DeliveryWorker } from '../../src/delivery/worker.js';
import { createMetrics } from '../../src/observability/metrics.js';
import { openBlobStore } from '../../src/blobs/index.js';
import { freshApp, type TestApp } from '../support/app.js';
import { CONTACT_TEMPLATE, PRIVATE_KEY, PUBLIC_KEY, seedOrg } from '../support/seed.js';
import { contentRow } from '../support/db.js';
import { describeDialects } from '../support/dialects.js';

const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };

const FORM_TEMPLATE = {
  ...CONTACT_TEMPLATE,
  id: 'form',
  strict_params: false,
  allow_attachments: true,
  text: '{{message}} | colours: {{colours}} | plan: {{plan}} | agree: {{agree}}',
};

describeDialects('POST /v1/send-form on %s', (dialect, skip) => {
  let t: TestApp | undefined;
  let base = '';
  let dir = '';
  afterEach(async () => {
    await t?.cleanup();
    t = undefined;
    if (dir !== '') fs.rmSync(dir, { recursive: true, force: true });
  });

  async function start(): Promise<TestApp> {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mailroom-form-'));
    t = await freshApp(dialect, { MAILROOM_DATA_DIR: dir });
    await seedOrg(t.store, { templates: [CONTACT_TEMPLATE, FORM_TEMPLATE] });
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    return t;
  }

  const form = (entries: Array<[string, string | Blob, string?]>) => {
    const fd = new FormData();
    for (const [k, v, name] of entries) {
      if (typeof v === 'string') fd.append(k, v);
      else fd.append(k, v, name);
    }
    return fd;
  };
  const post = (url: string, body: FormData | string, headers: Record<string, string> = {}) =>
    fetch(`${base}${url}`, { method: 'POST', body, headers });

  it.skipIf(skip)('fields become parameters, files attachments; reserved fields last-wins; delivered', async () => {
    const app = await start();
    const body = form([
      ['template_id', 'contact'],
      ['name', 'Ada'],
      ['email', 'ada@example.com'],
      ['message', 'Hello from a form'],
      ['colours', 'red'],
      ['colours', 'blue'],
      ['plan', 'pro'],
      ['agree', 'on'],
      ['cv', new Blob(['%PDF-1.7 cv'], { type: 'application/pdf' }), 'cv.pdf'],
      ['photos', new Blob(['photo one'], { type: 'image/jpeg' }), 'one.jpg'],
      ['photos', new Blob(['photo two'], { type: 'image/jpeg' }), 'two.jpg'],
      ['template_id', 'form'],
      ['user_id', PUBLIC_KEY],
    ]);
    const res = await post('/v1/send-form', body, { authorization: `Bearer ${PRIVATE_KEY}` });
    expect(res.status).toBe(202);
    const json = (await res.json()) as { message_id: string; status: string };
    expect(json.status).toBe('queued');
    expect(res.headers.get('x-mail-message-id')).toBe(json.message_id);

    const blobs = openBlobStore({ blobUrl: undefined, dataDir: dir, baseUrl: base });
    const worker = new DeliveryWorker({
      store: app.store,
      clock: app.clock,
      dataDir: dir,
      pacer: new LocalPacer(app.clock),
      metrics: createMetrics(),
      logger: quiet,
      blobs: blobs.blobs,
    });
    await worker.runOnce();
    await worker.stop(1000);
    const eml = fs.readFileSync(path.join(dir, 'outbox', `${json.message_id}.eml`));
    const parsed = await simpleParser(eml);
    expect(parsed.text?.trim()).toBe('Hello from a form | colours: red, blue | plan: pro | agree: on');
    expect(parsed.attachments.map((a) => a.filename)).toEqual(['cv.pdf', 'one.jpg', 'two.jpg']);
    expect(parsed.attachments[2]?.content.toString()).toBe('photo two');
  });

  it.skipIf(skip)('a file input left untouched (empty filename, no bytes) is not an attachment', async () => {
    const app = await start();
    const boundary = '----mailroomuntouched';
    const part = (name: string, value: string) =>
      `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
    const raw =
      part('template_id', 'form') +
      part('name', 'Ada') +
      part('email', 'ada@example.com') +
      part('message', 'hi') +
      `--${boundary}\r\nContent-Disposition: form-data; name="cv"; ` +
      `filename=""\r\nContent-Type: application/octet-stream\r\n\r\n\r\n--${boundary}--\r\n`;
    const res = await post('/v1/send-form', raw, {
      authorization: `Bearer ${PRIVATE_KEY}`,
      'content-type': `multipart/form-data; boundary=${boundary}`,
    });
    expect(res.status).toBe(202);
    const row = await contentRow(app.store);
    expect(row.attachments).toBeNull();
  });

  it.skipIf(skip)('the alias answers 200 OK to legacy clients, errors in JSON', async () => {
    await start();
    const ok = await post(
      '/api/v1.0/email/send-form',
      form([
        ['template_id', 'form'],
        ['user_id', PUBLIC_KEY],
        ['name', 'Ada'],
        ['email', 'ada@example.com'],
        ['message', 'hi'],
        ['lib_version', '4.4.1'],
      ]),
    );
    expect(ok.status).toBe(200);
    expect(await ok.text()).toBe('OK');
    expect(ok.headers.get('x-mail-status')).toBe('queued');
    const bad = await post(
      '/api/v1.0/email/send-form',
      form([
        ['template_id', 'nope'],
        ['user_id', PUBLIC_KEY],
      ]),
    );
    expect(bad.status).toBe(404);
    expect(((await bad.json()) as { error: { code: string } }).error.code).toBe('template_not_found');
  });

  it.skipIf(skip)(
    '400 invalid_body for missing or over-long ids; malformed bodies are 400, oversize parts 413, never 500',
    async () => {
      await start();
      const auth = { authorization: `Bearer ${PRIVATE_KEY}` };
      const code = async (r: Promise<Response>) => {
        const res = await r;
        return `${res.status} ${((await res.json()) as { error: { code: string } }).error.code}`;
      };
      expect(await code(post('/v1/send-form', form([['template_id', 'x'.repeat(65)]]), auth))).toBe('400 invalid_body');
      expect(
        await code(
          post(
            '/v1/send-form',
            form([
              ['template_id', 'form'],
              ['service_id', 's'.repeat(65)],
            ]),
            auth,
          ),
        ),
      ).toBe('400 invalid_body');
      expect(await code(post('/v1/send-form', form([['name', 'x']]), auth))).toBe('400 invalid_body');
      const boundary = '----mailroomtest';
      const truncated =
        `--${boundary}\r\nContent-Disposition: form-data; ` +
        `name="template_id"\r\n\r\nform\r\n--${boundary}\r\nContent-Disposition: form-data; name="message"\r\n\r\nhal`;
      expect(
        await code(post('/v1/send-form', truncated, { ...auth, 'content-type': `multipart/form-data; boundary=${boundary}` })),
      ).toBe('400 bad_request');
      expect(await code(post('/v1/send-form', truncated, { ...auth, 'content-type': 'multipart/form-data' }))).toBe(
        '400 bad_request',
      );
      expect(
        await code(post('/v1/send-form', truncated, { ...auth, 'content-type': 'multipart/form-data; boundary=not-the-one' })),
      ).toBe('400 bad_request');
      expect(
        await code(
          post('/v1/send-form', JSON.stringify({ template_id: 'form' }), { ...auth, 'content-type': 'application/json' }),
        ),
      ).toBe('400 bad_request');
      const huge = new Blob([Buffer.alloc(15 * 1024 * 1024 + 10, 0x41)], { type: 'text/plain' });
      expect(
        await code(
          post(
            '/v1/send-form',
            form([
              ['template_id', 'form'],
              ['big', huge, 'big.txt'],
            ]),
            auth,
          ),
        ),
      ).toBe('413 attachment_too_large');
      expect(
        await code(
          post(
            '/v1/send-form',
            form([
              ['template_id', 'form'],
              ['name', 'A'],
              ['email', 'a@b.co'],
              ['message', 'x'],
              ['f', new Blob(['MZ\x90'], { type: 'image/png' }), 'x.png'],
            ]),
            auth,
          ),
        ),
      ).toBe('403 attachments_not_allowed');
    },
  );
});
