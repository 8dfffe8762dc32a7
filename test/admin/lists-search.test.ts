import { describe, expect, it } from 'vitest';
import { suppressionSource } from '../../src/admin/routes/lists.js';
import { freshAppEach, type TestApp } from '../support/app.js';
import { admin, createOrg } from '../support/admin.js';
import { expectError } from '../support/http.js';
import { describeDialects } from '../support/dialects.js';

/**
 * The suppression list and block list as the operator UI reads them: each suppression's source
 * and message, `q` (a case-insensitive substring) and keyset paging with `limit` and `cursor`.
 */

interface SuppressionPage {
  items: Array<{ email: string; reason: string; created_at: string; source: string; message_id: string | null }>;
  next_cursor: string | null;
}
interface BlockPage {
  items: string[];
  watch_variable: string | null;
  next_cursor: string | null;
}

async function pages<T extends { next_cursor: string | null }>(t: TestApp, path: string, limit: number): Promise<T[]> {
  const out: T[] = [];
  let cursor: string | null = null;
  do {
    const sep = path.includes('?') ? '&' : '?';
    const res = await admin(t, 'GET', `${path}${sep}limit=${limit}${cursor === null ? '' : `&cursor=${cursor}`}`);
    expect(res.statusCode, res.body).toBe(200);
    const page = res.json<T>();
    out.push(page);
    cursor = page.next_cursor;
  } while (cursor !== null && out.length < 20);
  return out;
}

describe('suppressionSource', () => {
  it('is the reason when it names a source, its leading word when that does, else other', () => {
    expect(
      ['manual', 'hard_bounce', 'complaint', 'Hard_Bounce: 550 5.1.1', 'complaint (abuse)', 'inactive', ''].map(
        suppressionSource,
      ),
    ).toEqual(['manual', 'hard_bounce', 'complaint', 'hard_bounce', 'complaint', 'other', 'other']);
  });
});

describeDialects('admin list search and paging on %s', (dialect, skip) => {
  let t!: TestApp;
  freshAppEach(dialect, skip, (app) => {
    t = app;
  });

  it.skipIf(skip)('suppressions say why each is there and from which message', async () => {
    await createOrg(t);
    await admin(t, 'POST', '/organizations/acme/suppressions', { email: 'ann@example.org' });
    await t.store.suppressions.add('acme', 'bob@example.org', 'complaint', t.clock.now(), 'msg_complained_1');
    await t.store.suppressions.add('acme', 'cy@example.org', 'hard_bounce', t.clock.now(), 'msg_bounced_1');
    const res = await admin(t, 'GET', '/organizations/acme/suppressions');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({
      items: [
        {
          email: 'ann@example.org',
          reason: 'manual',
          created_at: '2026-01-01T00:00:00.000Z',
          source: 'manual',
          message_id: null,
        },
        {
          email: 'bob@example.org',
          reason: 'complaint',
          created_at: '2026-01-01T00:00:00.000Z',
          source: 'complaint',
          message_id: 'msg_complained_1',
        },
        {
          email: 'cy@example.org',
          reason: 'hard_bounce',
          created_at: '2026-01-01T00:00:00.000Z',
          source: 'hard_bounce',
          message_id: 'msg_bounced_1',
        },
      ],
      next_cursor: null,
    });
  });

  it.skipIf(skip)('q finds a case-insensitive substring; %, _ and \\ match only themselves', async () => {
    await createOrg(t);
    for (const email of ['Ann@Example.org', 'a_b@x.test', 'axb@x.test', 'pct%@x.test', 'back\\slash@x.test', 'zed@other.test']) {
      await t.store.suppressions.add('acme', email, 'manual', t.clock.now());
      await t.store.blockList.add('acme', email, t.clock.now());
    }
    const search = async (q: string): Promise<[string[], string[]]> => {
      const s = await admin(t, 'GET', `/organizations/acme/suppressions?q=${encodeURIComponent(q)}`);
      const b = await admin(t, 'GET', `/organizations/acme/block-list?q=${encodeURIComponent(q)}`);
      expect(s.statusCode, s.body).toBe(200);
      expect(b.statusCode, b.body).toBe(200);
      return [s.json<SuppressionPage>().items.map((i) => i.email), b.json<BlockPage>().items];
    };
    expect(await search('EXAMPLE')).toEqual([['ann@example.org'], ['ann@example.org']]);
    expect(await search('a_b')).toEqual([['a_b@x.test'], ['a_b@x.test']]);
    expect(await search('%')).toEqual([['pct%@x.test'], ['pct%@x.test']]);
    expect(await search('\\')).toEqual([['back\\slash@x.test'], ['back\\slash@x.test']]);
    expect((await search('x.test'))[0]).toEqual(['a_b@x.test', 'axb@x.test', 'back\\slash@x.test', 'pct%@x.test']);
    expect(await search('nobody')).toEqual([[], []]);
    // Blank is no filter.
    expect((await search('  '))[1]).toHaveLength(6);
  });

  it.skipIf(skip)('limit and cursor page through in address order, neither skipping nor repeating', async () => {
    await createOrg(t, 'acme', { security: { block_list: { watch_variable: 'email' } } });
    const emails = Array.from({ length: 7 }, (_, i) => `user${i}@example.org`);
    for (const email of [...emails].reverse()) {
      await t.store.suppressions.add('acme', email, 'manual', t.clock.now());
      await t.store.blockList.add('acme', email, t.clock.now());
    }
    await t.store.suppressions.add('acme', 'other@else.test', 'manual', t.clock.now());

    const s = await pages<SuppressionPage>(t, '/organizations/acme/suppressions?q=example', 3);
    expect(s.map((p) => p.items.length)).toEqual([3, 3, 1]);
    expect(s.flatMap((p) => p.items.map((i) => i.email))).toEqual(emails);
    expect(s[2]?.next_cursor).toBeNull();

    const b = await pages<BlockPage>(t, '/organizations/acme/block-list', 4);
    expect(b.map((p) => p.items.length)).toEqual([4, 3]);
    expect(b.flatMap((p) => p.items)).toEqual(emails);
    expect(b[0]?.watch_variable).toBe('email');

    // An entry removed between pages does not shift the next one.
    const first = (await admin(t, 'GET', '/organizations/acme/block-list?limit=2')).json<BlockPage>();
    await t.store.blockList.remove('acme', 'user0@example.org');
    const second = (
      await admin(t, 'GET', `/organizations/acme/block-list?limit=2&cursor=${first.next_cursor ?? ''}`)
    ).json<BlockPage>();
    expect(second.items).toEqual(['user2@example.org', 'user3@example.org']);

    // An exact page has no further one.
    expect((await admin(t, 'GET', '/organizations/acme/suppressions?limit=8')).json<SuppressionPage>().next_cursor).toBeNull();
  });

  it.skipIf(skip)('bad paging or search is a 400 invalid_body naming the field', async () => {
    await createOrg(t);
    for (const list of ['suppressions', 'block-list']) {
      for (const [query, field] of [
        ['limit=0', 'limit'],
        ['limit=501', 'limit'],
        ['limit=x', 'limit'],
        ['cursor=abc', 'cursor'],
        [`cursor=${Buffer.from('[1]').toString('base64url')}`, 'cursor'],
        [`cursor=${Buffer.from('["a\\u0000"]').toString('base64url')}`, 'cursor'],
        ['q=a%00b', 'q'],
        [`q=${'a'.repeat(255)}`, 'q'],
      ] as const) {
        const err = expectError(await admin(t, 'GET', `/organizations/acme/${list}?${query}`), 400, 'invalid_body');
        expect(
          (err.details?.fields ?? []).map((f) => f.field),
          `${list}?${query}`,
        ).toContain(field);
      }
      expectError(await admin(t, 'GET', `/organizations/nobody/${list}?q=a`), 404, 'not_found');
    }
  });
});
