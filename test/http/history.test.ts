import { describe, expect, it } from 'vitest';
import { freshAppAll, type TestApp } from '../support/app.js';
import { CONTACT_TEMPLATE, PRIVATE_KEY, PUBLIC_KEY, seedOrg } from '../support/seed.js';
import { bearer, expectError, expectInvalidField } from '../support/http.js';
import { CONTACT_PARAMS, sendOk } from '../support/send.js';
import { DYN, ROOMY } from '../support/orgs.js';
import { storedRow } from '../support/stored.js';
import { describeDialects } from '../support/dialects.js';

/**
 * GET /v1/history: private key only, newest first, cursor pagination that neither skips nor
 * repeats an item while messages keep arriving, and the filters status, template_id,
 * service_id, from (inclusive), to (exclusive) and q (exact recipient).
 */

interface HistoryItem {
  message_id: string;
  status: string;
  template_id: string;
  service_id: string;
  subject: string | null;
  to: string[];
  created_at: string;
  sent_at: string | null;
}
interface Page {
  items: HistoryItem[];
  next_cursor: string | null;
}

const security = { allowed_origins: ['example.com'], allow_mobile_apps: true, ip_limit: ROOMY.ip_limit };

async function seed(t: TestApp): Promise<void> {
  await seedOrg(t.store, {
    plan: ROOMY.plan,
    credits: 10_000,
    security,
    services: [
      { id: 'outbox', provider: 'outbox', default: true },
      { id: 'second', provider: 'outbox' },
    ],
    templates: [CONTACT_TEMPLATE, DYN],
  });
  await seedOrg(t.store, {
    id: 'other',
    plan: ROOMY.plan,
    credits: 100,
    security,
    keys: [{ type: 'private', key: 'sk_other_private_1' }],
    templates: [CONTACT_TEMPLATE, DYN],
  });
}

function historyOf(t: TestApp) {
  return async (query: Record<string, string | number> = {}, key = PRIVATE_KEY): Promise<Page> => {
    const res = await raw(t, query, bearer(key));
    expect(res.statusCode, res.body).toBe(200);
    const page = res.json<Page>();
    expect(Object.keys(page).sort()).toEqual(['items', 'next_cursor']);
    return page;
  };
}

function raw(t: TestApp, query: Record<string, string | number>, headers: Record<string, string>) {
  const qs = new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)])).toString();
  return t.app.inject({ method: 'GET', url: `/v1/history${qs === '' ? '' : `?${qs}`}`, headers });
}

const ids = (page: Page) => page.items.map((i) => i.message_id);
const iso = (ms: number) => new Date(ms).toISOString();

/** Follows next_cursor to the end; returns every page. */
async function allPages(
  history: ReturnType<typeof historyOf>,
  query: Record<string, string | number>,
  between?: () => Promise<void>,
): Promise<Page[]> {
  const pages: Page[] = [];
  let cursor: string | null = null;
  do {
    const page: Page = await history(cursor === null ? query : { ...query, cursor });
    pages.push(page);
    cursor = page.next_cursor;
    if (between !== undefined && cursor !== null) await between();
    if (pages.length > 100) throw new Error('pagination does not end');
  } while (cursor !== null);
  return pages;
}

describeDialects('GET /v1/history filters on %s', (dialect, skip) => {
  let t: TestApp;
  let history: ReturnType<typeof historyOf>;
  // m1 oldest … m5 newest, one second apart.
  const m: Record<'m1' | 'm2' | 'm3' | 'm4' | 'm5' | 'foreign', string> = { m1: '', m2: '', m3: '', m4: '', m5: '', foreign: '' };
  const at: Record<string, number> = {};

  freshAppAll(dialect, skip, async (app) => {
    t = app;
    history = historyOf(t);
    await seed(t);
    const dyn = (to: string, name: string, extra: Record<string, unknown> = {}) => ({
      template_id: 'dyn',
      template_params: { to, name, ...extra },
    });
    m.m1 = (await sendOk(t, { template_id: 'contact', template_params: CONTACT_PARAMS }, bearer(PRIVATE_KEY))).message_id;
    t.clock.advance(1000);
    m.m2 = (await sendOk(t, { ...dyn('Alice@Example.com', 'A'), service_id: 'second' }, bearer(PRIVATE_KEY))).message_id;
    t.clock.advance(1000);
    m.m3 = (await sendOk(t, dyn('bob@example.com', 'B'), bearer(PRIVATE_KEY))).message_id;
    t.clock.advance(1000);
    m.m4 = (await sendOk(t, dyn('alice@example.com', 'C', { cc: 'Carol@example.com' }), bearer(PRIVATE_KEY))).message_id;
    t.clock.advance(1000);
    m.m5 = (
      await sendOk(t, { template_id: 'contact', template_params: CONTACT_PARAMS }, { 'x-mail-public-key': PUBLIC_KEY })
    ).message_id;
    m.foreign = (await sendOk(t, dyn('alice@example.com', 'F'), bearer('sk_other_private_1'))).message_id;
    for (const id of Object.values(m)) at[id] = (await storedRow(t, id)).created_at;
    await t.store.messages.transition('acme', m.m3, ['queued'], 'failed', t.clock.now());
    await t.store.messages.transition('acme', m.m5, ['queued'], 'sent', t.clock.now());
  });

  it.skipIf(skip)('403 private_key_required for a public key; 401 without a key', async () => {
    expectError(await raw(t, {}, { 'x-mail-public-key': PUBLIC_KEY }), 403, 'private_key_required');
    expectError(await raw(t, {}, {}), 401, 'unauthorized');
    expectError(await raw(t, {}, bearer('sk_unknown_key_999')), 401, 'invalid_private_key');
  });

  it.skipIf(skip)('403 private_key_in_browser for a private key with an Origin', async () => {
    expectError(await raw(t, {}, { ...bearer(PRIVATE_KEY), origin: 'https://example.com' }), 403, 'private_key_in_browser');
  });

  it.skipIf(skip)("lists the organization's messages newest first, with subject, to and times", async () => {
    const page = await history();
    expect(ids(page)).toEqual([m.m5, m.m4, m.m3, m.m2, m.m1]);
    expect(page.next_cursor).toBeNull();
    const byId = new Map(page.items.map((i) => [i.message_id, i]));
    const m2 = byId.get(m.m2);
    expect(m2).toEqual({
      message_id: m.m2,
      status: 'queued',
      template_id: 'dyn',
      service_id: 'second',
      subject: 'Hello A',
      to: expect.any(Array),
      created_at: expect.any(String),
      sent_at: null,
      mode: 'live',
    });
    expect(m2?.to.map((a) => a.toLowerCase())).toEqual(['alice@example.com']);
    expect(byId.get(m.m1)).toMatchObject({
      subject: 'Message from Ann',
      to: ['owner@acme.test'],
      template_id: 'contact',
      service_id: 'outbox',
    });
    expect(byId.get(m.m4)?.to.map((a) => a.toLowerCase())).toContain('alice@example.com');
    for (const item of page.items) expect(Date.parse(item.created_at)).toBe(at[item.message_id]);
    expect(byId.get(m.m3)?.status).toBe('failed');
    expect(byId.get(m.m5)?.status).toBe('sent');
  });

  it.skipIf(skip)("never shows another organization's messages", async () => {
    expect(ids(await history())).not.toContain(m.foreign);
    expect(ids(await history({}, 'sk_other_private_1'))).toEqual([m.foreign]);
  });

  describe('limit', () => {
    it.skipIf(skip)('limits the page and offers a cursor when more remain', async () => {
      const one = await history({ limit: 1 });
      expect(ids(one)).toEqual([m.m5]);
      expect(one.next_cursor).toEqual(expect.any(String));
      const rest = await history({ limit: 4, cursor: one.next_cursor ?? '' });
      expect(ids(rest)).toEqual([m.m4, m.m3, m.m2, m.m1]);
      expect(rest.next_cursor).toBeNull();
      expect(ids(await history({ limit: 100 }))).toHaveLength(5);
    });

    it.skipIf(skip)('outside 1..100 or not an integer → 400 invalid_body naming limit', async () => {
      for (const limit of ['0', '101', 'x', '-1', '1.5', '']) {
        expectInvalidField(await raw(t, { limit }, bearer(PRIVATE_KEY)), 'limit');
      }
    });
  });

  describe('filters', () => {
    it.skipIf(skip)('status: one status, or a comma-separated list', async () => {
      expect(ids(await history({ status: 'failed' }))).toEqual([m.m3]);
      expect(ids(await history({ status: 'queued' }))).toEqual([m.m4, m.m2, m.m1]);
      expect(ids(await history({ status: 'failed,sent' }))).toEqual([m.m5, m.m3]);
      expect(ids(await history({ status: 'sent,queued' }))).toEqual([m.m5, m.m4, m.m2, m.m1]);
      expect(ids(await history({ status: 'held' }))).toEqual([]);
      // A status named twice lists each message once.
      expect(ids(await history({ status: 'queued,failed,queued' }))).toEqual([m.m4, m.m3, m.m2, m.m1]);
    });

    it.skipIf(skip)('a list of statuses pages newest first across the statuses, by cursor', async () => {
      const pages = await allPages(history, { status: 'queued,failed,sent', limit: 2 });
      expect(pages.map(ids)).toEqual([[m.m5, m.m4], [m.m3, m.m2], [m.m1]]);
    });

    it.skipIf(skip)('an unknown status → 400 invalid_body naming status', async () => {
      expectInvalidField(await raw(t, { status: 'bogus' }, bearer(PRIVATE_KEY)), 'status');
      expectInvalidField(await raw(t, { status: 'queued,bogus' }, bearer(PRIVATE_KEY)), 'status');
    });

    it.skipIf(skip)('template_id and service_id', async () => {
      expect(ids(await history({ template_id: 'dyn' }))).toEqual([m.m4, m.m3, m.m2]);
      expect(ids(await history({ template_id: 'contact' }))).toEqual([m.m5, m.m1]);
      expect(ids(await history({ template_id: 'nope' }))).toEqual([]);
      expect(ids(await history({ service_id: 'second' }))).toEqual([m.m2]);
      expect(ids(await history({ service_id: 'outbox' }))).toEqual([m.m5, m.m4, m.m3, m.m1]);
    });

    it.skipIf(skip)('from is inclusive and to is exclusive, at exact created_at boundaries', async () => {
      const t2 = at[m.m2] ?? 0;
      const t4 = at[m.m4] ?? 0;
      expect(ids(await history({ from: iso(t2) }))).toEqual([m.m5, m.m4, m.m3, m.m2]);
      expect(ids(await history({ from: iso(t2 + 1) }))).toEqual([m.m5, m.m4, m.m3]);
      expect(ids(await history({ to: iso(t4) }))).toEqual([m.m3, m.m2, m.m1]);
      expect(ids(await history({ to: iso(t4 + 1) }))).toEqual([m.m4, m.m3, m.m2, m.m1]);
      expect(ids(await history({ from: iso(t2), to: iso(t4) }))).toEqual([m.m3, m.m2]);
      expect(ids(await history({ from: iso(t4), to: iso(t4) }))).toEqual([]);
      // Another zone, same instant.
      const plusTwo = new Date(t2 + 2 * 3_600_000).toISOString().replace('Z', '+02:00');
      expect(ids(await history({ from: plusTwo }))).toEqual([m.m5, m.m4, m.m3, m.m2]);
    });

    it.skipIf(skip)('from and to must be date-times → 400 invalid_body naming them', async () => {
      expectInvalidField(await raw(t, { from: 'yesterday' }, bearer(PRIVATE_KEY)), 'from');
      expectInvalidField(await raw(t, { to: 'soon' }, bearer(PRIVATE_KEY)), 'to');
    });

    it.skipIf(skip)('from and to that pass the date-time format but name no instant → 400 invalid_body naming them', async () => {
      // The format allows a leap second, an hour-only or "-00" offset and any whitespace as the
      // separator; Date.parse reads none of these, and NaN reached the database.
      const unreadable = [
        '2016-12-31T23:59:60Z',
        '2030-06-30T23:59:60Z',
        '2020-01-01T00:59:60+01:00',
        '2020-01-01T00:00:00+02',
        '2020-01-01T00:00:00-00',
        '2020-01-01\u202800:00:00Z',
      ];
      for (const value of unreadable) {
        expectInvalidField(await raw(t, { from: value }, bearer(PRIVATE_KEY)), 'from');
        expectInvalidField(await raw(t, { to: value }, bearer(PRIVATE_KEY)), 'to');
      }
      // Beyond the years a date-time can spell, and beyond what a Date can hold.
      for (const value of ['+275760-09-13T00:00:00.001Z', '275760-09-13T00:00:00Z', '-000001-01-01T00:00:00Z']) {
        expectInvalidField(await raw(t, { from: value }, bearer(PRIVATE_KEY)), 'from');
        expectInvalidField(await raw(t, { to: value }, bearer(PRIVATE_KEY)), 'to');
      }
    });

    it.skipIf(skip)(
      'from and to at the edges of the calendar and in the other spellings Date.parse reads still filter',
      async () => {
        const t2 = at[m.m2] ?? 0;
        expect(ids(await history({ from: '0000-01-01T00:00:00Z' }))).toEqual([m.m5, m.m4, m.m3, m.m2, m.m1]);
        expect(ids(await history({ to: '9999-12-31T23:59:59.999-23:59' }))).toEqual([m.m5, m.m4, m.m3, m.m2, m.m1]);
        expect(ids(await history({ to: '0001-01-01T00:00:00Z' }))).toEqual([]);
        expect(ids(await history({ from: iso(t2).replace('T', 't').replace('Z', 'z') }))).toEqual([m.m5, m.m4, m.m3, m.m2]);
        expect(ids(await history({ from: iso(t2).replace('T', ' ') }))).toEqual([m.m5, m.m4, m.m3, m.m2]);
      },
    );

    it.skipIf(skip)(
      'template_id, service_id or q with a NUL or another control character → 400 invalid_body naming it',
      async () => {
        // PostgreSQL refuses NUL in text parameters (a 500 before); SQLite would just match nothing.
        for (const bad of ['a\u0000b', '\u0000', 'dyn\u0001', 'dyn\u007f', 'dyn\u0085', 'dy\nn']) {
          expectInvalidField(await raw(t, { template_id: bad }, bearer(PRIVATE_KEY)), 'template_id');
          expectInvalidField(await raw(t, { service_id: bad }, bearer(PRIVATE_KEY)), 'service_id');
        }
        for (const bad of ['alice@example.com\u0000', 'a\u0000b', 'alice\u001b@example.com', 'alice@exa\tmple.com']) {
          expectInvalidField(await raw(t, { q: bad }, bearer(PRIVATE_KEY)), 'q');
        }
        // The check comes after authentication, like the other filters.
        expectError(await raw(t, { template_id: 'a\u0000b' }, {}), 401, 'unauthorized');
        // Surrounding whitespace of q is still trimmed, not refused.
        expect(ids(await history({ q: '\talice@example.com\n' }))).toEqual([m.m4, m.m2]);
      },
    );

    it.skipIf(skip)('q: exact recipient address, case-insensitive', async () => {
      expect(ids(await history({ q: 'alice@example.com' }))).toEqual([m.m4, m.m2]);
      expect(ids(await history({ q: 'ALICE@Example.COM' }))).toEqual([m.m4, m.m2]);
      expect(ids(await history({ q: 'bob@example.com' }))).toEqual([m.m3]);
      expect(ids(await history({ q: 'owner@acme.test' }))).toEqual([m.m5, m.m1]);
      // A CC recipient is a recipient.
      expect(ids(await history({ q: 'carol@example.com' }))).toEqual([m.m4]);
      // Exact: no substring or domain match.
      expect(ids(await history({ q: 'alice' }))).toEqual([]);
      expect(ids(await history({ q: 'example.com' }))).toEqual([]);
      expect(ids(await history({ q: 'lice@example.com' }))).toEqual([]);
      expect(ids(await history({ q: 'nobody@example.com' }))).toEqual([]);
    });

    it.skipIf(skip)('q over 254 characters → 400 invalid_body naming q', async () => {
      expectInvalidField(await raw(t, { q: `${'a'.repeat(250)}@example.com` }, bearer(PRIVATE_KEY)), 'q');
    });

    it.skipIf(skip)('filters combine, and paginate', async () => {
      expect(ids(await history({ template_id: 'dyn', q: 'alice@example.com', status: 'queued' }))).toEqual([m.m4, m.m2]);
      expect(ids(await history({ template_id: 'dyn', service_id: 'outbox', status: 'queued,failed' }))).toEqual([m.m4, m.m3]);
      const pages = await allPages(history, { q: 'alice@example.com', limit: 1 });
      expect(pages.flatMap(ids)).toEqual([m.m4, m.m2]);
      expect(pages.length).toBeLessThanOrEqual(3);
      expect(pages.at(-1)?.next_cursor).toBeNull();
    });
  });

  describe('cursor', () => {
    it.skipIf(skip)('a cursor not returned by this endpoint → 400 invalid_body naming cursor', async () => {
      const junk = [
        'garbage!!',
        'not-a-cursor',
        Buffer.from('{"a":1}').toString('base64url'),
        Buffer.from('[1,2,3]').toString('base64url'),
        'c'.repeat(2049),
      ];
      for (const cursor of junk) expectInvalidField(await raw(t, { cursor }, bearer(PRIVATE_KEY)), 'cursor');
    });

    it.skipIf(skip)(
      'a cursor whose time is no safe millisecond time or whose id is no message id → 400 invalid_body naming cursor',
      async () => {
        const cursorOf = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
        const id = m.m3;
        const junk = [
          // Integers to Number.isInteger, but past PostgreSQL's bigint (a 500) or SQLite's exact range.
          [1e20, id],
          [1e300, id],
          [2 ** 63 + 4096, id],
          [2 ** 53, id],
          [Number.MAX_SAFE_INTEGER, id],
          // Before the epoch, or after the last instant a Date holds.
          [-1, id],
          [8.64e15 + 1, id],
          // Ids no message can have: PostgreSQL refuses NUL in text (a 500 before).
          [1, 'a\u0000'],
          [1, '\u0000'],
          [1, ''],
          [1, 'msg x'],
          [1, 'msg_\u00e9'],
          [1, 'm'.repeat(65)],
        ];
        for (const value of junk) {
          expectInvalidField(await raw(t, { cursor: cursorOf(value) }, bearer(PRIVATE_KEY)), 'cursor');
        }
      },
    );

    it.skipIf(skip)('a cursor at a real message, or at the last instant a Date holds, pages on from there', async () => {
      const cursorOf = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
      expect(ids(await history({ cursor: cursorOf([at[m.m3], m.m3]) }))).toEqual([m.m2, m.m1]);
      expect(ids(await history({ cursor: cursorOf([8.64e15, 'msg_0']) }))).toEqual([m.m5, m.m4, m.m3, m.m2, m.m1]);
      expect(ids(await history({ cursor: cursorOf([0, 'msg_0']) }))).toEqual([]);
    });
  });

  it.skipIf(skip)('messages older than the retention are gone from the history', async () => {
    t.clock.advance(30 * 86_400_000 - 2500);
    // now - 30 days falls between m2 and m3.
    expect(ids(await history())).toEqual([m.m5, m.m4, m.m3]);
    expect(ids(await history({ from: iso(at[m.m1] ?? 0) }))).toEqual([m.m5, m.m4, m.m3]);
    t.clock.advance(10 * 86_400_000);
    expect(ids(await history())).toEqual([]);
  });
});

describeDialects('GET /v1/history pagination on %s', (dialect, skip) => {
  let t: TestApp;
  let history: ReturnType<typeof historyOf>;
  const sent: string[] = [];

  const sendOne = async (n: number) =>
    (await sendOk(t, { template_id: 'dyn', template_params: { to: `user${n}@example.com`, name: `n${n}` } }, bearer(PRIVATE_KEY)))
      .message_id;

  freshAppAll(dialect, skip, async (app) => {
    t = app;
    history = historyOf(t);
    await seed(t);
    // 60 messages, three at each instant, so the cursor must also order ties.
    for (let n = 0; n < 60; n++) {
      if (n % 3 === 0) t.clock.advance(1000);
      sent.push(await sendOne(n));
    }
  });

  it.skipIf(skip)('one page of 100 holds all 60, newest first', async () => {
    const page = await history({ limit: 100 });
    expect(page.next_cursor).toBeNull();
    expect(new Set(ids(page))).toEqual(new Set(sent));
    expect(page.items).toHaveLength(60);
    const times = page.items.map((i) => Date.parse(i.created_at));
    expect(times).toEqual([...times].sort((a, b) => b - a));
    // Between instants, newest first is the reverse of sending order.
    const groupsNewestFirst = [...Array(20).keys()].reverse().map((g) => new Set(sent.slice(g * 3, g * 3 + 3)));
    const idsPage = ids(page);
    for (const [g, group] of groupsNewestFirst.entries()) expect(new Set(idsPage.slice(g * 3, g * 3 + 3))).toEqual(group);
  });

  it.skipIf(skip)('the default page size is 25', async () => {
    const pages = await allPages(history, {});
    expect(pages.map((p) => p.items.length)).toEqual([25, 25, 10]);
    expect(pages.flatMap(ids)).toEqual(ids(await history({ limit: 100 })));
  });

  it.skipIf(skip)('pages of 7 return every message exactly once, in order', async () => {
    const full = ids(await history({ limit: 100 }));
    const pages = await allPages(history, { limit: 7 });
    expect(pages.map((p) => p.items.length)).toEqual([7, 7, 7, 7, 7, 7, 7, 7, 4]);
    const walked = pages.flatMap(ids);
    expect(walked).toEqual(full);
    expect(new Set(walked).size).toBe(60);
    expect(pages.at(-1)?.next_cursor).toBeNull();
  });

  it.skipIf(skip)('a cursor stays valid and gives the same next page when asked twice', async () => {
    const first = await history({ limit: 7 });
    const a = await history({ limit: 7, cursor: first.next_cursor ?? '' });
    const b = await history({ limit: 7, cursor: first.next_cursor ?? '' });
    expect(ids(a)).toEqual(ids(b));
    expect(ids(a).some((id) => ids(first).includes(id))).toBe(false);
  });

  it.skipIf(skip)('stable under concurrent inserts: no original message skipped or repeated', async () => {
    const full = ids(await history({ limit: 100 }));
    let n = 1000;
    const added: string[] = [];
    const pages = await allPages(history, { limit: 7 }, async () => {
      // New messages arrive between page fetches, some at the same instant as the previous ones.
      added.push(await sendOne(n++));
      t.clock.advance(1);
      added.push(await sendOne(n++));
      added.push(await sendOne(n++));
    });
    expect(added.length).toBeGreaterThan(10);
    const walked = pages.flatMap(ids);
    expect(new Set(walked).size).toBe(walked.length);
    expect(walked.filter((id) => full.includes(id))).toEqual(full);
    // A fresh walk sees the newcomers too, each once.
    const again = (await allPages(history, { limit: 7 })).flatMap(ids);
    expect(again).toHaveLength(60 + added.length);
    expect(new Set(again)).toEqual(new Set([...full, ...added]));
  });
});

/**
 * Issue 11: `?to=2030-01-01` was 400 ("must match format date-time"). A plain date is a whole
 * UTC day: `from` its first millisecond, `to` its last (inclusive), still exclusive of the next.
 */
describeDialects('GET /v1/history with plain dates on %s', (dialect, skip) => {
  let t: TestApp;
  let history: ReturnType<typeof historyOf>;
  // Each at a millisecond either side of a UTC midnight.
  const sent: Record<'lastOf31' | 'firstOf1' | 'lastOf1' | 'firstOf2', string> = {
    lastOf31: '',
    firstOf1: '',
    lastOf1: '',
    firstOf2: '',
  };

  freshAppAll(dialect, skip, async (app) => {
    t = app;
    history = historyOf(t);
    await seed(t);
    const times = {
      lastOf31: Date.parse('2025-12-31T23:59:59.999Z'),
      firstOf1: Date.parse('2026-01-01T00:00:00.000Z'),
      lastOf1: Date.parse('2026-01-01T23:59:59.999Z'),
      firstOf2: Date.parse('2026-01-02T00:00:00.000Z'),
    };
    for (const [name, ms] of Object.entries(times) as Array<[keyof typeof sent, number]>) {
      t.clock.set(ms);
      sent[name] = (await sendOk(t, { template_id: 'contact', template_params: CONTACT_PARAMS }, bearer(PRIVATE_KEY))).message_id;
    }
  });

  it.skipIf(skip)('from=YYYY-MM-DD starts at midnight UTC of that day, inclusive', async () => {
    expect(ids(await history({ from: '2026-01-01' }))).toEqual([sent.firstOf2, sent.lastOf1, sent.firstOf1]);
    expect(ids(await history({ from: '2026-01-02' }))).toEqual([sent.firstOf2]);
    expect(ids(await history({ from: '2026-01-03' }))).toEqual([]);
  });

  it.skipIf(skip)('to=YYYY-MM-DD ends with the last millisecond of that UTC day, which it includes', async () => {
    expect(ids(await history({ to: '2026-01-01' }))).toEqual([sent.lastOf1, sent.firstOf1, sent.lastOf31]);
    expect(ids(await history({ to: '2025-12-31' }))).toEqual([sent.lastOf31]);
    expect(ids(await history({ to: '2025-12-30' }))).toEqual([]);
    // The issue's own example.
    expect(ids(await history({ to: '2030-01-01' }))).toEqual([sent.firstOf2, sent.lastOf1, sent.firstOf1, sent.lastOf31]);
  });

  it.skipIf(skip)('the same day as from and to is that whole day; dates and date-times mix', async () => {
    expect(ids(await history({ from: '2026-01-01', to: '2026-01-01' }))).toEqual([sent.lastOf1, sent.firstOf1]);
    expect(ids(await history({ from: '2026-01-01', to: '2026-01-01T23:59:59.999Z' }))).toEqual([sent.firstOf1]);
    expect(ids(await history({ from: '2026-01-01T00:00:00.001Z', to: '2026-01-02' }))).toEqual([sent.firstOf2, sent.lastOf1]);
  });

  it.skipIf(skip)('a date that is not a calendar day, or not YYYY-MM-DD, is 400 invalid_body naming the field', async () => {
    for (const bad of ['2026-02-30', '2026-13-01', '2026-1-1', '20260101', '2026-01-01T', 'tomorrow']) {
      expectInvalidField(await raw(t, { from: bad }, bearer(PRIVATE_KEY)), 'from');
      expectInvalidField(await raw(t, { to: bad }, bearer(PRIVATE_KEY)), 'to');
    }
    // One line per field saying what is accepted, not one per branch of the schema.
    const err = expectError(await raw(t, { from: 'tomorrow', to: 'later', limit: 0 }, bearer(PRIVATE_KEY)), 400, 'invalid_body');
    const fields = (err.details?.fields ?? []) as Array<{ field: string; message: string }>;
    expect(fields.map((f) => f.field).sort()).toEqual(['from', 'limit', 'to']);
    for (const name of ['from', 'to']) {
      expect(fields.find((f) => f.field === name)?.message).toBe('must be a date (YYYY-MM-DD) or a date-time');
    }
  });

  it.skipIf(skip)('the OpenAPI document allows both forms for from and to', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json<{
      paths: Record<
        string,
        { get?: { parameters?: Array<{ name: string; in: string; schema?: { anyOf?: Array<{ format?: string }> } }> } }
      >;
    }>();
    const params = doc.paths['/v1/history']?.get?.parameters ?? [];
    for (const name of ['from', 'to']) {
      const p = params.find((x) => x.name === name && x.in === 'query');
      expect(
        p?.schema?.anyOf?.map((s) => s.format),
        name,
      ).toEqual(['date', 'date-time']);
    }
  });
});
