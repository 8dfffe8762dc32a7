import { expect, it } from 'vitest';
import { admin, createOrg } from '../support/admin.js';
import { freshAppEach, type TestApp } from '../support/app.js';
import { expectError, expectInvalidField } from '../support/http.js';
import { endpointRow } from '../support/webhooks/dispatch.js';
import { describeDialects } from '../support/dialects.js';

/**
 * Custom request headers of a webhook endpoint in the admin API (issue 29): checked in words
 * naming the header, masked on every read, and kept when a read's mask is sent back while the
 * URL's origin stays.
 */

const HOOKS = '/organizations/acme/webhooks';
const MASK = '********';
const AUTH = 'Basic aG9vazpzM2NyZXQtdmFsdWUtWFla';
const TOKEN = 'tok-9f8e7d6c5b4a';

interface Header {
  name: string;
  value: string;
}
interface Fields {
  field: string;
  message: string;
}
const fieldsOf = (body: string): Fields[] =>
  (JSON.parse(body) as { error: { details: { fields: Fields[] } } }).error.details.fields;

describeDialects('webhook custom headers in the admin API on %s', (dialect, skip) => {
  let t!: TestApp;
  freshAppEach(dialect, skip, (app) => {
    t = app;
  });

  const create = (headers: unknown, id = 'crm') => admin(t, 'POST', HOOKS, { id, url: 'http://127.0.0.1:9/hook', headers });

  it.skipIf(skip)('refuses reserved, malformed, duplicate and too many headers, naming each in words', async () => {
    await createOrg(t);
    const bad = await create([
      { name: 'Content-Type', value: 'text/plain' },
      { name: 'webhook-signature', value: 'v1,forged' },
      { name: 'X Bad', value: 'x' },
      { name: 'Host', value: 'evil.example' },
      { name: 'X-Split', value: `${TOKEN}\r\nX-Injected: 1` },
      { name: 'x-dup', value: 'a' },
      { name: 'X-Dup', value: 'b' },
      { name: 'X-Empty', value: '' },
      { name: 'Transfer-Encoding', value: 'chunked' },
      { name: 'User-Agent', value: 'me' },
    ]);
    expectInvalidField(bad, 'headers.0.name');
    const fields = fieldsOf(bad.body);
    const message = (field: string) => fields.find((f) => f.field === field)?.message;
    expect(message('headers.0.name')).toBe('"Content-Type" is always application/json: it cannot be set');
    expect(message('headers.1.name')).toBe('"webhook-signature" is set by mailroom to sign the request: it cannot be set');
    expect(message('headers.2.name')).toMatch(/^"X Bad" is not a header name: use letters, digits and/);
    expect(message('headers.3.name')).toBe('"Host" is set from the URL: it cannot be set');
    expect(message('headers.4.value')).toBe(
      'of "X-Split" has a line break, NUL or other control character (a tab is the only one allowed)',
    );
    expect(message('headers.6.name')).toBe('"X-Dup" is listed twice');
    expect(message('headers.7.value')).toBe('of "X-Empty" is empty');
    expect(message('headers.8.name')).toMatch(/hop-by-hop/);
    expect(message('headers.9.name')).toMatch(/User-Agent" is set by mailroom/);
    // A value is a secret even when refused: no answer repeats it.
    expect(bad.body).not.toContain(TOKEN);

    const many = await create(Array.from({ length: 11 }, (_, i) => ({ name: `X-H${i}`, value: 'v' })));
    expectInvalidField(many, 'headers');
    expect(fieldsOf(many.body)[0]?.message).toBe('may list at most 10 headers (11 given)');
    const long = await create([{ name: 'X-Long', value: 'v'.repeat(1025) }]);
    expectInvalidField(long, 'headers.0.value');
    // Not a list of {name, value}: the schema's 400.
    expectError(await create([{ name: 'X-A' }]), 400, 'invalid_body');
    expectError(await create([{ name: 'X-A', value: 'v', extra: 1 }]), 400, 'invalid_body');
    expect((await admin(t, 'GET', HOOKS)).json<{ items: unknown[] }>().items).toEqual([]);
  });

  it.skipIf(skip)('stores the values, shows names and the mask on every read, never a value', async () => {
    await createOrg(t);
    const created = await create([
      { name: 'Authorization', value: AUTH },
      { name: 'X-Api-Token', value: TOKEN },
    ]);
    expect(created.statusCode, created.body).toBe(201);
    const expected = [
      { name: 'Authorization', value: MASK },
      { name: 'X-Api-Token', value: MASK },
    ];
    expect(created.json<{ headers: Header[] }>().headers).toEqual(expected);
    expect(JSON.parse((await endpointRow(t.store, 'crm')).headers)).toEqual([
      { name: 'Authorization', value: AUTH },
      { name: 'X-Api-Token', value: TOKEN },
    ]);
    const got = await admin(t, 'GET', `${HOOKS}/crm`);
    const list = await admin(t, 'GET', HOOKS);
    expect(got.json<{ headers: Header[] }>().headers).toEqual(expected);
    for (const res of [created, got, list]) {
      expect(res.body).not.toContain(AUTH);
      expect(res.body).not.toContain(TOKEN);
    }
    // An endpoint without headers reads as an empty list.
    expect((await create(undefined, 'plain')).json<{ headers: Header[] }>().headers).toEqual([]);
  });

  it.skipIf(skip)('keeps a value whose mask comes back (PUT of GET, PATCH), replaces or drops what is sent', async () => {
    await createOrg(t);
    expect((await create([{ name: 'Authorization', value: AUTH }])).statusCode).toBe(201);
    const stored = async () => JSON.parse((await endpointRow(t.store, 'crm')).headers) as Header[];

    // GET → edit → PUT: the mask keeps the stored value.
    const read = (await admin(t, 'GET', `${HOOKS}/crm`)).json<Record<string, unknown>>();
    const put = await admin(t, 'PUT', `${HOOKS}/crm`, { ...read, description: 'edited' });
    expect(put.statusCode, put.body).toBe(200);
    expect(await stored()).toEqual([{ name: 'Authorization', value: AUTH }]);

    // PATCH without headers keeps them; with the mask (any case of the name) and a new one, both.
    expect((await admin(t, 'PATCH', `${HOOKS}/crm`, { description: 'again' })).statusCode).toBe(200);
    expect(await stored()).toEqual([{ name: 'Authorization', value: AUTH }]);
    const added = await admin(t, 'PATCH', `${HOOKS}/crm`, {
      headers: [
        { name: 'authorization', value: MASK },
        { name: 'X-Api-Token', value: TOKEN },
      ],
    });
    expect(added.statusCode, added.body).toBe(200);
    expect(await stored()).toEqual([
      { name: 'authorization', value: AUTH },
      { name: 'X-Api-Token', value: TOKEN },
    ]);
    expect(added.body).not.toContain(TOKEN);

    // Same origin, another path: the masks still stand.
    const path = await admin(t, 'PATCH', `${HOOKS}/crm`, { url: 'http://127.0.0.1:9/other' });
    expect(path.statusCode, path.body).toBe(200);
    expect((await stored()).map((h) => h.value)).toEqual([AUTH, TOKEN]);

    // The mask of a header that is not stored is refused.
    const unknown = await admin(t, 'PATCH', `${HOOKS}/crm`, { headers: [{ name: 'X-Other', value: MASK }] });
    expectInvalidField(unknown, 'headers.0.value');
    expect(fieldsOf(unknown.body)[0]?.message).toContain('"X-Other", which is not stored: send its value');

    // Another origin: the stored values do not follow the URL, whether PATCH names headers or not.
    const moved = await admin(t, 'PATCH', `${HOOKS}/crm`, { url: 'http://127.0.0.1:10/hook' });
    expectInvalidField(moved, 'headers.0.value');
    expect(fieldsOf(moved.body)[0]?.message).toContain('the URL now goes to http://127.0.0.1:10');
    const movedPut = await admin(t, 'PUT', `${HOOKS}/crm`, { ...read, url: 'http://localhost:9/hook' });
    expectInvalidField(movedPut, 'headers.0.value');
    expect((await endpointRow(t.store, 'crm')).url).toBe('http://127.0.0.1:9/other');
    const resent = await admin(t, 'PATCH', `${HOOKS}/crm`, {
      url: 'http://127.0.0.1:10/hook',
      headers: [{ name: 'Authorization', value: 'Bearer new' }],
    });
    expect(resent.statusCode, resent.body).toBe(200);
    expect(await stored()).toEqual([{ name: 'Authorization', value: 'Bearer new' }]);

    // A PUT without headers means none; an empty list in PATCH drops them too.
    const bare = await admin(t, 'PUT', `${HOOKS}/crm`, { url: 'http://127.0.0.1:10/hook', events: ['*'], enabled: true });
    expect(bare.statusCode, bare.body).toBe(200);
    expect(await stored()).toEqual([]);
    await admin(t, 'PATCH', `${HOOKS}/crm`, { headers: [{ name: 'X-A', value: 'a' }] });
    expect((await admin(t, 'PATCH', `${HOOKS}/crm`, { headers: [] })).json<{ headers: Header[] }>().headers).toEqual([]);
    expect(await stored()).toEqual([]);
  });

  it.skipIf(skip)('a new endpoint cannot take a mask as a value', async () => {
    await createOrg(t);
    const res = await create([{ name: 'Authorization', value: MASK }]);
    expectInvalidField(res, 'headers.0.value');
    const put = await admin(t, 'PUT', `${HOOKS}/fresh`, {
      url: 'http://127.0.0.1:9/hook',
      events: ['*'],
      enabled: true,
      headers: [{ name: 'Authorization', value: MASK }],
    });
    expectInvalidField(put, 'headers.0.value');
  });
});
