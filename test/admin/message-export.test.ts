import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect, it } from 'vitest';
import { EXPORT_CHUNK } from '../../src/admin/routes/message-export.js';
import { admin } from '../support/admin.js';
import { ADMIN_TOKEN, freshAppEach, type TestApp } from '../support/app.js';
import { describeDialects } from '../support/dialects.js';
import { expectError, expectInvalidField } from '../support/http.js';
import { seedOrg } from '../support/seed.js';
import { insertMessages } from '../support/stored-messages.js';

/**
 * GET /admin/v1/organizations/{org}/messages/export.csv (issue 29): the filtered list as CSV,
 * streamed page by page, RFC 4180 quoting and the spreadsheet formula guard, the admin API's
 * auth, and a client that leaves stops the reads.
 */

/** RFC 4180 records (quoted fields with doubled quotes, CRLF line ends). */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(cell);
      cell = '';
    } else if (c === '\r' && text[i + 1] === '\n') {
      row.push(cell);
      rows.push(row);
      row = [];
      cell = '';
      i++;
    } else cell += c;
  }
  expect(cell === '' && row.length === 0, 'the last record ends with CRLF').toBe(true);
  return rows;
}

const HEADER = [
  'message_id',
  'created_at',
  'status',
  'mode',
  'template_id',
  'service_id',
  'subject',
  'to',
  'sent_at',
  'retrying',
];

const exportCsv = (t: TestApp, query = '') => admin(t, 'GET', `/organizations/acme/messages/export.csv${query}`);

describeDialects('admin message export on %s', (dialect, skip) => {
  let t!: TestApp;
  freshAppEach(dialect, skip, async (app) => {
    t = app;
    await seedOrg(t.store);
  });

  it.skipIf(skip)('a CSV attachment: header row, RFC 4180 quoting, formula cells guarded, columns as listed', async () => {
    const now = t.clock.now();
    const [plain, tricky] = await insertMessages(t.store, 'acme', [
      { at: now - 2000, subject: 'Plain', to: ['a@x.test', 'b@x.test'] },
      { at: now - 1000, subject: '=HYPERLINK("http://evil.test","click"), then\r\nmore', to: ['c@x.test'] },
      { at: now - 500, subject: '@SUM(1)' },
      { at: now - 400, subject: '+1' },
      { at: now - 300, subject: '-2' },
      { at: now - 200, subject: '\tTabbed' },
      { at: now - 100, subject: 'Zoë, "quoted"' },
    ]);
    const res = await exportCsv(t);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    const day = new Date(now).toISOString().slice(0, 10);
    expect(res.headers['content-disposition']).toBe(`attachment; filename="mailroom-messages-acme-${day}.csv"`);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).toContain('"=HYPERLINK(""http://evil.test"",""click""), then\r\nmore"'.replace('"=', `"'=`));
    const rows = parseCsv(res.body);
    expect(rows[0]).toEqual(HEADER);
    expect(rows.slice(1).map((r) => r[6])).toEqual([
      'Zoë, "quoted"',
      "'\tTabbed",
      "'-2",
      "'+1",
      "'@SUM(1)",
      `'=HYPERLINK("http://evil.test","click"), then\r\nmore`,
      'Plain',
    ]);
    expect(rows[6]?.[0]).toBe(tricky);
    expect(rows[7]).toEqual([
      plain,
      new Date(now - 2000).toISOString(),
      'queued',
      'live',
      'contact',
      'default',
      'Plain',
      'a@x.test;b@x.test',
      '',
      'false',
    ]);
  });

  it.skipIf(skip)('every page of a list longer than one read, in order, with the filters and search applied', async () => {
    const now = t.clock.now();
    const n = 2 * EXPORT_CHUNK + 150;
    const inputs = Array.from({ length: n }, (_, i) => ({
      at: now - 10 * (n - i),
      subject: i % 3 === 0 ? `Receipt ${i}` : `Hello ${i}`,
      to: [`user${i % 7}@example.org`],
      status: i % 5 === 0 ? ('held' as const) : ('queued' as const),
    }));
    inputs.push({ at: now - 1, subject: 'Receipt test', to: ['user0@example.org'], status: 'queued', mode: 'test' } as never);
    const ids = await insertMessages(t.store, 'acme', inputs);
    const all = parseCsv((await exportCsv(t)).body).slice(1);
    expect(all).toHaveLength(n);
    expect(all.map((r) => r[0])).toEqual(ids.slice(0, n).reverse());

    const receipts = parseCsv((await exportCsv(t, '?subject=RECEIPT&status=held')).body).slice(1);
    const expected = inputs.flatMap((m, i) => (i < n && m.subject.startsWith('Receipt') && m.status === 'held' ? [ids[i]] : []));
    expect(receipts.map((r) => r[0])).toEqual(expected.reverse());
    expect(receipts.every((r) => r[2] === 'held')).toBe(true);

    const user3 = parseCsv((await exportCsv(t, `?recipient=USER3@&from=${new Date(now - 10_000).toISOString()}`)).body).slice(1);
    expect(user3.length).toBeGreaterThan(100);
    expect(user3.every((r) => r[7] === 'user3@example.org')).toBe(true);

    const test = parseCsv((await exportCsv(t, '?mode=test')).body).slice(1);
    expect(test.map((r) => [r[3], r[6]])).toEqual([['test', 'Receipt test']]);
    expect(parseCsv((await exportCsv(t, `?message_id=${ids[5] ?? ''}`)).body)).toEqual([HEADER, expect.any(Array)]);
  });

  it.skipIf(skip)('an empty list is the header row alone; a bad filter a 400 before any CSV; an unknown org 404', async () => {
    expect((await exportCsv(t)).body).toBe(`${HEADER.join(',')}\r\n`);
    expectInvalidField(await exportCsv(t, '?status=nope'), 'status');
    expectInvalidField(await exportCsv(t, '?from=yesterday'), 'from');
    expectInvalidField(await exportCsv(t, '?subject=a%00'), 'subject');
    expectError(await admin(t, 'GET', '/organizations/nobody/messages/export.csv'), 404, 'not_found');
  });

  it.skipIf(skip)("the admin API's auth: no token or a wrong one is 401; the UI's session cookie downloads", async () => {
    expectError(await admin(t, 'GET', '/organizations/acme/messages/export.csv', undefined, null), 401, 'unauthorized');
    expectError(await admin(t, 'GET', '/organizations/acme/messages/export.csv', undefined, 'x'.repeat(40)), 401, 'unauthorized');
    const signIn = await t.app.inject({ method: 'POST', url: '/admin/v1/session', payload: { token: ADMIN_TOKEN } });
    const cookie = /^(mailroom_session=[^;]+);/.exec(String(signIn.headers['set-cookie']))?.[1] ?? '';
    const res = await t.app.inject({
      method: 'GET',
      url: '/admin/v1/organizations/acme/messages/export.csv',
      headers: { cookie },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.body.startsWith('message_id,')).toBe(true);
  });

  it.skipIf(skip)('a client that disconnects mid-stream stops the reads: no page after the one in flight', async () => {
    const now = t.clock.now();
    await insertMessages(
      t.store,
      'acme',
      Array.from({ length: 5 * EXPORT_CHUNK }, (_, i) => ({ at: now - 5 * EXPORT_CHUNK + i })),
    );
    // Every read after the first waits for the test, so socket buffers cannot hide a read ahead.
    const messages = t.store.messages;
    const history = messages.history.bind(messages);
    let reads = 0;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    messages.history = async (...args) => {
      reads++;
      if (reads > 1) await gate;
      return history(...args);
    };
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = t.app.server.address() as AddressInfo;
    const firstBytes = await new Promise<string>((resolve, reject) => {
      const req = http.get(
        {
          host: '127.0.0.1',
          port,
          path: '/admin/v1/organizations/acme/messages/export.csv',
          headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
        },
        (res) => {
          res.once('data', (chunk: Buffer) => {
            req.destroy();
            resolve(chunk.toString('utf8'));
          });
        },
      );
      req.on('error', (err) => (err.message.includes('socket hang up') ? undefined : reject(err)));
    });
    expect(firstBytes.startsWith('message_id,')).toBe(true);
    // The server sees the close and destroys the stream; the read in flight (if any) finishes,
    // and no further page is read: 6 reads would list all 5,000 rows.
    await new Promise((r) => setTimeout(r, 200));
    const atDisconnect = reads;
    release();
    await new Promise((r) => setTimeout(r, 500));
    expect(atDisconnect).toBeLessThanOrEqual(2);
    expect(reads).toBe(atDisconnect);
  });
});
