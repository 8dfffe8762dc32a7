import { describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, freshAppEach, type TestApp } from '../support/app.js';
import { seedOrg } from '../support/seed.js';
import { admin } from '../support/admin.js';
import { expectError } from '../support/http.js';
import { describeDialects } from '../support/dialects.js';
import { csvRecords, csvRow } from '../../src/domain/csv.js';

const T0 = Date.UTC(2026, 0, 2, 3, 4, 5);

interface Imported {
  rows: number;
  imported: number;
  already_suppressed: number;
  duplicates: number;
  invalid_count: number;
  invalid: Array<{ line: number; value: string; reason: string }>;
}

describe('csv cells and records', () => {
  it('quotes per RFC 4180 and guards formula-leading cells', () => {
    expect(csvRow(['a', 'b,c', 'say "hi"', 'two\nlines', null, 7])).toBe('a,"b,c","say ""hi""","two\nlines",,7\r\n');
    expect(csvRow(['=SUM(A1)', '+1', '-2', '@x', '\tt', '\rr', 'a=b'])).toBe(`'=SUM(A1),'+1,'-2,'@x,'\tt,"'\rr",a=b\r\n`);
  });

  it('reads quoted cells across lines with the line each record starts on', () => {
    const text = '\ufeffemail,reason\r\n"a,b"@x.com,manual\n\n"multi\nline",x\r\nlast,"q""uote"';
    expect([...csvRecords(text)]).toEqual([
      { line: 1, cells: ['email', 'reason'] },
      { line: 2, cells: ['a,b@x.com', 'manual'] },
      { line: 4, cells: ['multi\nline', 'x'] },
      { line: 6, cells: ['last', 'q"uote'] },
    ]);
    expect([...csvRecords('email\n"open\nstill')]).toEqual([
      { line: 1, cells: ['email'] },
      { line: 2, reason: 'a quoted cell is not closed before the end of the file' },
    ]);
  });
});

describeDialects('suppressions as CSV on %s', (dialect, skip) => {
  let t!: TestApp;
  freshAppEach(
    dialect,
    skip,
    (app) => {
      t = app;
    },
    { MAILROOM_BODY_LIMIT_BYTES: String(64 * 1024) },
  );

  const importCsv = (org: string, text: string, type = 'text/csv') =>
    t.app.inject({
      method: 'POST',
      url: `/admin/v1/organizations/${org}/suppressions/import`,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': type },
      payload: text,
    });
  const exportCsv = (org: string) => admin(t, 'GET', `/organizations/${org}/suppressions/export.csv`);

  it.skipIf(skip)('export: every entry by address, quoted, formula cells guarded, as a download', async () => {
    await seedOrg(t.store);
    await t.store.suppressions.add('acme', 'b@example.com', 'hard_bounce', T0, 'msg_1');
    await t.store.suppressions.add('acme', '=HYPERLINK("x")@example.com', 'manual', T0);
    await t.store.suppressions.add('acme', '-dash@example.com', 'complaint', T0);
    await t.store.suppressions.add('acme', '"a,b"@example.com', 'manual', T0);
    await t.store.suppressions.add('acme', 'zoë@exämple.com', 'manual', T0);
    const res = await exportCsv('acme');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(res.headers['content-disposition']).toBe('attachment; filename="suppressions-acme.csv"');
    const at = new Date(T0).toISOString();
    expect(res.body).toBe(
      'email,reason,source,created_at,message_id\r\n' +
        `"""a,b""@example.com",manual,manual,${at},\r\n` +
        `'-dash@example.com,complaint,complaint,${at},\r\n` +
        `"'=hyperlink(""x"")@example.com",manual,manual,${at},\r\n` +
        `b@example.com,hard_bounce,hard_bounce,${at},msg_1\r\n` +
        `zoë@xn--exmple-cua.com,manual,manual,${at},\r\n`,
    );
    expectError(await exportCsv('nope'), 404, 'not_found');
  });

  it.skipIf(skip)('import: canonical addresses, duplicates, already suppressed and bad lines by number', async () => {
    await seedOrg(t.store);
    await t.store.suppressions.add('acme', 'old@example.com', 'hard_bounce', T0);
    const text = [
      'Email,Reason,Note',
      'Ann@Example.com,,first',
      'ann@example.com,manual,duplicate',
      'OLD@example.com,manual,already',
      'zoë@EXÄMPLE.com,complaint,idn',
      'not-an-address,,x',
      'x@localhost,,no dot',
      '"spaced out@example.com",,x',
      ',,empty',
      'bob@example.com,angry,bad reason',
      '"multi',
      'line@example.com",,spans two lines',
      'short',
      'carol@example.com',
    ].join('\r\n');
    const res = await importCsv('acme', text);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json<Imported>();
    expect(body).toMatchObject({ rows: 12, imported: 3, already_suppressed: 1, duplicates: 1, invalid_count: 7 });
    expect(body.invalid.map((i) => [i.line, i.value])).toEqual([
      [6, 'not-an-address'],
      [7, 'x@localhost'],
      [8, 'spaced out@example.com'],
      [9, ''],
      [10, 'bob@example.com'],
      [11, 'multi\r\nline@example.com'],
      [13, 'short'],
    ]);
    expect(body.invalid[4]?.reason).toBe('reason must be manual, hard_bounce, complaint or empty (manual)');
    expect(body.invalid[3]?.reason).toBe('email is empty');
    // 'short' has an email cell: it is simply not an address.
    expect(body.invalid[6]?.reason).toContain('not an address');
    const list = (await t.store.suppressions.list('acme')).map((s) => [s.email, s.reason]);
    expect(list).toEqual([
      ['ann@example.com', 'manual'],
      ['carol@example.com', 'manual'],
      ['old@example.com', 'hard_bounce'],
      ['zoë@xn--exmple-cua.com', 'complaint'],
    ]);
  });

  it.skipIf(skip)('import refuses a wrong header, a wrong type and files over the caps, adding nothing', async () => {
    await seedOrg(t.store);
    for (const text of ['', 'address,reason\na@example.com,', '"email\na@example.com']) {
      const err = expectError(await importCsv('acme', text), 400, 'invalid_body');
      expect(err.details).toMatchObject({ fields: [{ field: 'header' }] });
    }
    expectError(await importCsv('acme', 'email\na@example.com', 'application/json'), 400, 'bad_request');
    expect((await importCsv('acme', 'email\na@example.com', 'text/plain')).statusCode).toBeGreaterThanOrEqual(400);
    // Over MAILROOM_BODY_LIMIT_BYTES (64 KiB here, below the import's own 10 MiB).
    const big = `email\n${'x'.repeat(70 * 1024)}@example.com\n`;
    expectError(await importCsv('acme', big), 413, 'payload_too_large');
    expect(await t.store.suppressions.list('acme')).toEqual([]);
    expectError(await importCsv('nope', 'email\na@example.com'), 404, 'not_found');
  });
});

describeDialects('suppression CSV at full size on %s', (dialect, skip) => {
  let t!: TestApp;
  freshAppEach(dialect, skip, (app) => {
    t = app;
  });

  const importCsv = (org: string, text: string) =>
    t.app.inject({
      method: 'POST',
      url: `/admin/v1/organizations/${org}/suppressions/import`,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'text/csv' },
      payload: text,
    });
  const exportCsv = (org: string) => admin(t, 'GET', `/organizations/${org}/suppressions/export.csv`);

  it.skipIf(skip)('export streams every page: 2,345 entries, then imports back into another organization', async () => {
    await seedOrg(t.store);
    await seedOrg(t.store, { id: 'copy', keys: [] });
    const entries = Array.from({ length: 2345 }, (_, i) => ({
      email: `u${String(i).padStart(5, '0')}@example.com`,
      reason: i % 3 === 0 ? 'hard_bounce' : 'manual',
    }));
    entries.push({ email: '+plus@example.com', reason: 'complaint' });
    await t.store.transaction((tx) => tx.suppressions.addMany('acme', entries, T0));
    const first = await exportCsv('acme');
    expect(first.body.split('\r\n').length).toBe(1 + 2346 + 1);

    const res = await importCsv('copy', first.body);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json<Imported>()).toEqual({
      rows: 2346,
      imported: 2346,
      already_suppressed: 0,
      duplicates: 0,
      invalid_count: 0,
      invalid: [],
    });
    const again = await exportCsv('copy');
    const cols = (body: string) => [...csvRecords(body)].map((r) => ('cells' in r ? r.cells.slice(0, 3).join('|') : r.reason));
    expect(cols(again.body)).toEqual(cols(first.body));
    expect((await t.store.suppressions.get('copy', '+plus@example.com'))?.reason).toBe('complaint');
  });

  it.skipIf(skip)('100,000 rows are taken; one more is 413 with nothing added', { timeout: 60_000 }, async () => {
    await seedOrg(t.store);
    const rows = (n: number) => `email\n${Array.from({ length: n }, (_, i) => `r${i}@e.co`).join('\n')}`;
    const over = await importCsv('acme', rows(100_001));
    const err = expectError(over, 413, 'payload_too_large');
    expect(err.details).toEqual({ max_rows: 100_000 });
    expect(await t.store.suppressions.list('acme')).toEqual([]);
    const ok = await importCsv('acme', rows(100_000));
    expect(ok.statusCode, ok.body.slice(0, 300)).toBe(200);
    expect(ok.json<Imported>().imported).toBe(100_000);
  });
});
