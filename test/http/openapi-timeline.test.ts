import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { TIMELINE_EVENT_TYPES } from '../../src/events/timeline-types.js';
import { EVENT_SOURCES } from '../../src/events/types.js';
import { freshAppEach, type TestApp } from '../support/app.js';
import { bearer } from '../support/http.js';
import { seedOrg } from '../support/seed.js';
import { sendOk, sendBody } from '../support/send.js';
import { describeDialects } from '../support/dialects.js';

/**
 * The OpenAPI document's timeline entry (GET /v1/messages/{id} → events[]): `type` an enum of
 * every type the code writes, each field described; and the cross-checks that keep the enum
 * whole: every type a writer in src/ names and every type a test's timeline shows is listed.
 */

const ROOT = path.join(import.meta.dirname, '../..');

interface JsonSchema {
  type?: unknown;
  enum?: unknown[];
  description?: string;
  properties?: Record<string, JsonSchema>;
  items?: JsonSchema;
  anyOf?: JsonSchema[];
}

function filesUnder(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const full = path.join(dir, d.name);
    return d.isDirectory() ? filesUnder(full) : d.name.endsWith('.ts') ? [full] : [];
  });
}

/** Every `'word'` literal captured by `pattern` (group 1 holds one literal or an array of them) in `files`. */
function literals(files: readonly string[], pattern: RegExp): Array<{ file: string; type: string }> {
  return files.flatMap((file) =>
    [...fs.readFileSync(file, 'utf8').matchAll(pattern)].flatMap((m) =>
      [...(m[1] ?? '').matchAll(/'([a-z_]+)'/g)].map((l) => ({ file: path.relative(ROOT, file), type: l[1] ?? '' })),
    ),
  );
}

const listed = (found: Array<{ file: string; type: string }>) =>
  found.filter((f) => !(TIMELINE_EVENT_TYPES as readonly string[]).includes(f.type));

describe('the timeline event types are all listed', () => {
  it('every type a writer in src/ names literally is in the enum', () => {
    const src = filesUnder(path.join(ROOT, 'src'));
    const appended = literals(src, /appendEvent\([^,()]+,\s*('[a-z_]+')/g);
    const queue = [path.join(ROOT, 'src/storage/queue.ts')];
    const queued = [...literals(queue, /\bevent\([^,()]+,\s*('[a-z_]+')/g), ...literals(queue, /\btype: ('[a-z_]+'), at:/g)];
    const settled = literals([path.join(ROOT, 'src/delivery/recipients.ts')], /\{ type: ('[a-z_]+'), detail:/g);
    // Each pattern still finds its writers: a rename must break this test, not empty it.
    for (const found of [appended, queued, settled]) expect(found.length).toBeGreaterThan(0);
    expect(listed([...appended, ...queued, ...settled])).toEqual([]);
    // The statuses written as event types (queue.markFinal, the first event) and provider event
    // types are checked at compile time in src/events/timeline-types.ts.
  });

  it("every type any test's timeline shows is in the enum", () => {
    // This file shows a type from the future on purpose (below).
    const tests = filesUnder(path.join(ROOT, 'test')).filter((f) => f !== import.meta.filename);
    const found = [
      // expect(v.events.map((e) => e.type)).toEqual([...]) / .toContain('…') / .not.toContain('…')
      ...literals(tests, /e\.type\)\)\.(?:not\.)?(?:toEqual|toContain)\((\[[^\]]*\]|'[a-z_]+')/g),
      // expect(v.events.at(-1)).toMatchObject({ type: '…' }), events[1] … toEqual({ type: '…'
      ...literals(tests, /events(?:\.at\(-?\d+\)|\[\d+\])\)\.to(?:Equal|MatchObject)\(\{ type: ('[a-z_]+')/g),
      // v.events.filter((e) => e.type === '…'), .find(…)
      ...literals(tests, /events\.(?:filter|find)\(\((?:e|x)\) => (?:e|x)\.type === ('[a-z_]+')/g),
    ];
    // The scan is not vacuous: the timeline tests really are found.
    expect(found.length).toBeGreaterThan(30);
    expect(new Set(found.map((f) => f.type)).size).toBeGreaterThanOrEqual(8);
    expect(listed(found)).toEqual([]);
  });
});

describeDialects('GET /v1/messages/{id} in the OpenAPI document and as served, on %s', (dialect, skip) => {
  let t: TestApp;
  freshAppEach(dialect, skip, (app) => {
    t = app;
  });

  it.skipIf(skip)('events[].type is an enum of every timeline type, each described; every field is described', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/v1/openapi.json' });
    expect(res.statusCode).toBe(200);
    const doc = res.json<{
      paths: Record<string, { get?: { responses?: Record<string, { content?: Record<string, { schema?: JsonSchema }> }> } }>;
    }>();
    const message = doc.paths['/v1/messages/{id}']?.get?.responses?.['200']?.content?.['application/json']?.schema;
    const entry = message?.properties?.events?.items;
    const fields = entry?.properties ?? {};
    expect(fields.type?.enum).toEqual([...TIMELINE_EVENT_TYPES]);
    for (const type of [
      'queued',
      'held',
      'released',
      'sending',
      'sent',
      'deferred',
      'delivered',
      'bounced',
      'complained',
      'failed',
      'discarded',
      'held_service_error',
    ]) {
      expect(fields.type?.enum).toContain(type);
      expect(fields.type?.description).toContain(`\`${type}\`: `);
    }
    expect(Object.keys(fields)).toEqual(['type', 'at', 'recipient', 'reason', 'provider', 'bounce_type', 'status', 'details']);
    for (const [name, schema] of Object.entries(fields)) expect(schema.description, name).toMatch(/\w{3}/);
    expect(fields.provider?.enum).toEqual([...EVENT_SOURCES]);
    expect(fields.bounce_type?.enum).toEqual(['hard', 'soft']);
    const details = fields.details?.properties ?? {};
    for (const key of [
      'reason',
      'attempt',
      'response',
      'recipients',
      'retry_at',
      'hard',
      'recipient',
      'provider',
      'bounce_type',
      'status',
      'extra',
    ]) {
      expect(details[key]?.description ?? details[key]?.anyOf?.[0]?.description ?? '', key).not.toBe('');
    }
    expect(details.bounce_type?.enum).toEqual(['hard', 'soft']);
  });

  it.skipIf(skip)(
    'the served timeline keeps its values as stored (a null reason ' +
      'stays null), and a type newer than the enum is still served, not a 500',
    async () => {
      await seedOrg(t.store);
      const { message_id: id } = await sendOk(t, sendBody(), bearer());
      const at = t.clock.now();
      await t.store.messages.appendEvent(id, 'bounced', at, at, { recipient: 'ada@example.org', reason: null, hard: true });
      await t.store.messages.appendEvent(id, 'a_type_from_the_future', at, at, {
        reason: 'written by newer code',
        extra: { n: 1, ok: true },
      });
      const res = await t.app.inject({ method: 'GET', url: `/v1/messages/${id}`, headers: bearer() });
      expect(res.statusCode, res.body).toBe(200);
      const events = res.json<{ events: Array<Record<string, unknown>> }>().events;
      expect(events.map((e) => e.type)).toEqual(['queued', 'bounced', 'a_type_from_the_future']);
      expect(events[1]).toEqual({
        type: 'bounced',
        at: new Date(at).toISOString(),
        recipient: 'ada@example.org',
        bounce_type: 'hard',
        details: { recipient: 'ada@example.org', reason: null, hard: true },
      });
      expect(events[2]).toMatchObject({ reason: 'written by newer code', details: { extra: { n: 1, ok: true } } });
    },
  );
});
