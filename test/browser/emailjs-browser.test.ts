import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser } from 'playwright-core';
import { chromiumAvailable, launchChromium } from '../support/browser.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openBlobStore } from '../../src/blobs/index.js';
import { LocalPacer } from '../../src/delivery/pacing.js';
import { DeliveryWorker } from '../../src/delivery/worker.js';
import { createMetrics } from '../../src/observability/metrics.js';
import { freshApp, type TestApp } from '../support/app.js';
import { CONTACT_TEMPLATE, PUBLIC_KEY, seedOrg } from '../support/seed.js';
import { type Sink, startSink } from '../support/smtp-sink.js';

/**
 * The unmodified @emailjs/browser bundle in Debian's Chromium, driven by playwright-core:
 * a page on a second loopback port with a real <form> calls sendForm and send against this
 * server, and the emails reach a real SMTP sink.
 */
const available = chromiumAvailable('the browser SDK test');

const here = path.dirname(fileURLToPath(import.meta.url));
const BUNDLE = path.resolve(here, '../../node_modules/@emailjs/browser/dist/email.min.js');

function pageHtml(apiUrl: string): string {
  return `<!doctype html><html><head><meta charset="utf-8"><script src="/email.min.js"></script></head><body>
<form id="contact">
  <input name="name" value="Ada Lovelace">
  <input name="email" value="ada@example.com">
  <textarea name="message">Sent from a real form</textarea>
  <select name="plan"><option value="free">Free</option><option value="pro" selected>Pro</option></select>
  <input type="checkbox" name="agree" value="yes" checked>
  <input type="file" name="cv">
  <input type="file" name="photos" multiple>
  <input type="file" name="untouched">
</form>
<script>
  emailjs.init({ publicKey: ${JSON.stringify(PUBLIC_KEY)}, origin: ${JSON.stringify(apiUrl)} });
  const settle = (p) =>
    p.then((r) => ({ ok: true, status: r.status, text: r.text }), (e) => ({ ok: false, status: e.status, text: e.text }));
  window.runSendForm = () => settle(emailjs.sendForm('default_service', 'form', '#contact'));
  window.runSend = () =>
    settle(emailjs.send('default_service', 'form', { name: 'Grace', email: 'grace@example.com', message: 'Sent with send()' }));
  window.runFailing = () => settle(emailjs.send('default_service', 'no-such-template', { name: 'x' }));
</script></body></html>`;
}

describe.skipIf(!available)('@emailjs/browser in headless Chromium', () => {
  let t: TestApp;
  let sink: Sink;
  let browser: Browser;
  let pageServer: http.Server;
  let pageUrl = '';
  let dataDir = '';
  const files = fs.mkdtempSync(path.join(os.tmpdir(), 'mailroom-browser-files-'));

  beforeAll(async () => {
    sink = await startSink();
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mailroom-browser-'));
    t = await freshApp('sqlite', { MAILROOM_DATA_DIR: dataDir });
    await seedOrg(t.store, {
      security: { allowed_origins: ['127.0.0.1'], allow_mobile_apps: false },
      services: [{ id: 'smtp', provider: 'smtp', default: true, smtp: { host: '127.0.0.1', port: sink.port } }],
      // Not strict: EmailJS's sendForm adds lib_version, which the spec makes a parameter.
      templates: [
        CONTACT_TEMPLATE,
        {
          ...CONTACT_TEMPLATE,
          id: 'form',
          strict_params: false,
          allow_attachments: true,
          text: '{{message}} / {{plan}} / {{agree}}',
        },
      ],
    });
    const apiUrl = await t.app.listen({ port: 0, host: '127.0.0.1' });
    pageServer = http.createServer((req, res) => {
      if (req.url === '/email.min.js') {
        res.writeHead(200, { 'content-type': 'text/javascript' });
        res.end(fs.readFileSync(BUNDLE));
        return;
      }
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(pageHtml(apiUrl));
    });
    await new Promise<void>((resolve) => pageServer.listen(0, '127.0.0.1', resolve));
    pageUrl = `http://127.0.0.1:${(pageServer.address() as AddressInfo).port}/`;
    fs.writeFileSync(path.join(files, 'cv.pdf'), '%PDF-1.7 curriculum vitae');
    fs.writeFileSync(path.join(files, 'one.jpg'), 'first photo');
    fs.writeFileSync(path.join(files, 'two.jpg'), 'second photo');
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await new Promise((r) => pageServer?.close(r));
    await t?.cleanup();
    await sink?.close();
    fs.rmSync(files, { recursive: true, force: true });
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('sendForm and send resolve {status: 200, text: OK}; the emails arrive with the fields and files', async () => {
    const page = await browser.newPage();
    await page.goto(pageUrl);
    await page.setInputFiles('input[name=cv]', path.join(files, 'cv.pdf'));
    await page.setInputFiles('input[name=photos]', [path.join(files, 'one.jpg'), path.join(files, 'two.jpg')]);

    expect(await page.evaluate('window.runSendForm()')).toEqual({ ok: true, status: 200, text: 'OK' });
    expect(await page.evaluate('window.runSend()')).toEqual({ ok: true, status: 200, text: 'OK' });
    // Errors keep CORS headers, so the SDK sees our error text rather than a network failure.
    const failing = (await page.evaluate('window.runFailing()')) as { ok: boolean; status: number; text: string };
    expect(failing.ok).toBe(false);
    expect(failing.status).toBe(404);
    expect(JSON.parse(failing.text).error.code).toBe('template_not_found');

    const worker = new DeliveryWorker({
      store: t.store,
      clock: t.clock,
      dataDir,
      pacer: new LocalPacer(t.clock),
      metrics: createMetrics(),
      logger: { info: () => undefined, warn: () => undefined, error: () => undefined },
      blobs: openBlobStore({ blobUrl: undefined, dataDir, baseUrl: t.config.baseUrl }).blobs,
    });
    await worker.runOnce();
    await worker.stop(1000);
    expect(sink.received).toHaveLength(2);
    const mails = await Promise.all([sink.parse(0), sink.parse(1)]);
    const fromForm = mails.find((m) => m.text?.includes('Sent from a real form'));
    const fromSend = mails.find((m) => m.text?.includes('Sent with send()'));
    expect(fromForm?.subject).toBe('Message from Ada Lovelace');
    expect(fromForm?.text?.trim()).toBe('Sent from a real form / pro / yes');
    expect(fromForm?.attachments.map((a) => a.filename)).toEqual(['cv.pdf', 'one.jpg', 'two.jpg']);
    expect(fromForm?.attachments[1]?.content.toString()).toBe('first photo');
    expect(fromSend?.subject).toBe('Message from Grace');
    expect(fromSend?.attachments).toEqual([]);
    await page.close();
  });
});
