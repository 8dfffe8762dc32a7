import { describe, expect, it } from 'vitest';
import { jsonBodyProblem, MAX_JSON_DEPTH } from '../../src/http/json-body.js';
import { ADMIN_TOKEN, freshAppEach, type TestApp } from '../support/app.js';
import { seedOrg } from '../support/seed.js';
import { bearer, expectError } from '../support/http.js';
import { creditsOf, messageCount } from '../support/stored.js';
import { post, sendBody } from '../support/send.js';
import { describeDialects } from '../support/dialects.js';

/** `{"a":{"a":…1…}}`, `depth` objects deep. */
function nested(depth: number): unknown {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = { a: v };
  return v;
}

/** The same as text, for depths JSON.stringify itself cannot reach. */
const deepText = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;

describe('jsonBodyProblem', () => {
  it(`takes ${MAX_JSON_DEPTH} levels of nesting and refuses one more, naming where`, () => {
    expect(jsonBodyProblem(nested(MAX_JSON_DEPTH))).toBeUndefined();
    const problem = jsonBodyProblem(nested(MAX_JSON_DEPTH + 1));
    expect(problem?.message).toBe(`is nested deeper than ${MAX_JSON_DEPTH} levels`);
    expect(problem?.field).toBe(Array.from({ length: MAX_JSON_DEPTH }, () => 'a').join('.'));
  });

  it('finds a NUL in a value or a key, in objects and arrays, and names the path', () => {
    expect(jsonBodyProblem({ a: ['ok', 'b\u0000d'] })).toEqual({ field: 'a[1]', message: 'contains a NUL character' });
    expect(jsonBodyProblem({ a: { 'k\u0000': 1 } })).toEqual({ field: 'a.k\\u0000', message: 'contains a NUL character' });
    expect(jsonBodyProblem('\u0000')).toEqual({ field: 'body', message: 'contains a NUL character' });
    expect(jsonBodyProblem({ a: 'fine', b: [1, null, true, { c: 'x' }] })).toBeUndefined();
  });

  it('walks a body far deeper than the stack allows without overflowing', () => {
    expect(jsonBodyProblem(JSON.parse(deepText(200_000)))?.message).toMatch(/nested deeper/);
  });
});

describeDialects('hostile JSON and form bodies on %s: 400, never 500, nothing taken', (dialect, skip) => {
  let t!: TestApp;
  freshAppEach(dialect, skip, (app) => {
    t = app;
  });

  const json = (extra: Record<string, string> = {}) => ({ ...bearer(), 'content-type': 'application/json', ...extra });

  it.skipIf(skip)('template_params nested 10,000 deep (a 60 kB body)', async () => {
    await seedOrg(t.store);
    const raw = `{"template_id":"contact","template_params":${deepText(10_000)}}`;
    const err = expectError(await post(t, raw, json()), 400, 'invalid_body');
    expect(err.details).toMatchObject({ fields: [{ message: `is nested deeper than ${MAX_JSON_DEPTH} levels` }] });
    expect(String((err.details as { fields: Array<{ field: string }> }).fields[0]?.field)).toMatch(/^template_params\.a\.a/);
    expect(await messageCount(t)).toBe(0);
    expect(await creditsOf(t)).toBe(100);
  });

  it.skipIf(skip)('a deep unknown top-level field with an Idempotency-Key (it would have been hashed recursively)', async () => {
    await seedOrg(t.store);
    const params = '{"name":"Ada","email":"ada@example.org","message":"hi"}';
    const raw = `{"template_id":"contact","template_params":${params},"extra":${deepText(10_000)}}`;
    expectError(await post(t, raw, json({ 'idempotency-key': 'deep-1' })), 400, 'invalid_body');
    expect(await messageCount(t)).toBe(0);
  });

  it.skipIf(skip)('the batch and admin routes share the same parser', async () => {
    await seedOrg(t.store);
    const raw = `{"messages":[{"template_id":"contact","template_params":${deepText(10_000)}}]}`;
    expect(expectError(await post(t, raw, json(), '/v1/send-batch'), 400, 'invalid_body').message).toMatch(
      /nested deeper than 64 levels/,
    );
    const admin = await t.app.inject({
      method: 'PUT',
      url: '/admin/v1/organizations/acme/templates/deep',
      payload: `{"subject":${deepText(10_000)}}`,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    });
    // The parser answers before the route's schema would (a subject must be a string).
    expect(expectError(admin, 400, 'invalid_body').message).toMatch(/subject\.a\.a.* nested deeper than 64 levels/);
  });

  it.skipIf(skip)('a NUL in template_id, service_id or a parameter (PostgreSQL text cannot hold one)', async () => {
    await seedOrg(t.store);
    for (const body of [
      sendBody({ template_id: 'con\u0000tact' }),
      sendBody({ service_id: 'out\u0000box' }),
      sendBody({ template_params: { name: 'A\u0000da', email: 'ada@example.org', message: 'hi' } }),
    ]) {
      const err = expectError(await post(t, body), 400, 'invalid_body');
      expect(err.message).toMatch(/NUL/);
    }
    expect(await messageCount(t)).toBe(0);
    expect(await creditsOf(t)).toBe(100);
  });

  it.skipIf(skip)('a NUL in a form field', async () => {
    await seedOrg(t.store);
    const boundary = '----mailroomnul';
    const part = (name: string, value: string) =>
      `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
    const raw =
      part('template_id', 'contact') +
      part('name', 'A\u0000da') +
      part('email', 'ada@example.org') +
      part('message', 'hi') +
      `--${boundary}--\r\n`;
    const err = expectError(
      await post(t, raw, { ...bearer(), 'content-type': `multipart/form-data; boundary=${boundary}` }, '/v1/send-form'),
      400,
      'invalid_body',
    );
    expect(err.details).toEqual({ fields: [{ field: 'name', message: 'contains a NUL character' }] });
    expect(await messageCount(t)).toBe(0);
  });
});
