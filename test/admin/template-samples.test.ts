import { expect, it } from 'vitest';
import { applyConfig } from '../../src/admin/apply.js';
import { parseConfigText } from '../../src/resources/config-file.js';
import { admin } from '../support/admin.js';
import { databaseOf } from '../support/db.js';
import { describeDialects } from '../support/dialects.js';
import { freshAppEach, type TestApp } from '../support/app.js';
import { expectError } from '../support/http.js';
import { seedOrg } from '../support/seed.js';

/**
 * A template's sample parameters (issue 29): stored as given with the template (PUT, PATCH, the
 * config file), kept by each version and brought back by a restore, used by the editor's render
 * and send test when they name none, at most 64 KiB, and a mismatch with the schema is a warning.
 */

const BASE = '/organizations/acme/templates/contact';
const SAMPLE = { name: 'Ada Lovelace', email: 'ada@example.com', message: 'Hello from the sample' };

interface Written {
  version: number;
  sample_params: Record<string, unknown> | null;
  warnings?: Array<{ code: string; message: string; issues: Array<{ param: string; code: string }> }>;
}

const get = async (t: TestApp, path = BASE) => {
  const res = await admin(t, 'GET', path);
  expect(res.statusCode, res.body).toBe(200);
  return res.json<Written>();
};

describeDialects('template sample parameters on %s', (dialect, skip) => {
  let t!: TestApp;
  freshAppEach(dialect, skip, (app) => {
    t = app;
  });

  it.skipIf(skip)(
    'PUT stores the sample as given; GET, the list and the public API show it; PATCH replaces it whole',
    async () => {
      await seedOrg(t.store);
      // Written by the config file without one: null, not an empty object.
      expect((await get(t)).sample_params).toBeNull();
      const current = await get(t);
      const put = await admin(t, 'PUT', BASE, { ...current, sample_params: SAMPLE });
      expect(put.statusCode, put.body).toBe(200);
      expect(put.json<Written>()).toMatchObject({ sample_params: SAMPLE });
      // No warning: the answer is what GET shows.
      expect(put.json()).toEqual(await get(t));
      expect((await get(t)).sample_params).toEqual(SAMPLE);
      const list = (await admin(t, 'GET', '/organizations/acme/templates')).json<{ items: Written[] }>();
      expect(list.items[0]?.sample_params).toEqual(SAMPLE);

      // Replaced whole, as `params` is: a merge would keep `email` and `message`.
      const patched = await admin(t, 'PATCH', BASE, { sample_params: { name: 'Grace' } });
      expect(patched.statusCode, patched.body).toBe(200);
      expect(patched.json<Written>().sample_params).toEqual({ name: 'Grace' });
      // Any other PATCH leaves it alone; null removes it; a PUT without it stores none.
      expect((await admin(t, 'PATCH', BASE, { subject: 'Hi {{name}}' })).json<Written>().sample_params).toEqual({
        name: 'Grace',
      });
      expect((await admin(t, 'PATCH', BASE, { sample_params: null })).json<Written>().sample_params).toBeNull();
      await admin(t, 'PATCH', BASE, { sample_params: SAMPLE });
      const { sample_params: _s, ...withoutSample } = await get(t);
      expect((await admin(t, 'PUT', BASE, withoutSample)).json<Written>().sample_params).toBeNull();
    },
  );

  it.skipIf(skip)('a sample the schema refuses is stored with a warning naming each issue, never refused', async () => {
    await seedOrg(t.store);
    const res = await admin(t, 'PATCH', BASE, { sample_params: { name: 'Ada', email: 'not an address', extra: 1 } });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json<Written>();
    expect(body.sample_params).toEqual({ name: 'Ada', email: 'not an address', extra: 1 });
    expect(body.warnings).toHaveLength(1);
    expect(body.warnings?.[0]?.code).toBe('sample_params_mismatch');
    // CONTACT_TEMPLATE is strict: `extra` is unknown; `message` is required; `email` is no address.
    expect(body.warnings?.[0]?.issues.map((i) => [i.param, i.code]).sort()).toEqual([
      ['email', 'format'],
      ['extra', 'unknown'],
      ['message', 'required'],
    ]);
    // A schema change that leaves the sample behind is saved too.
    const renamed = await admin(t, 'PATCH', BASE, {
      sample_params: SAMPLE,
      params: [{ name: 'full_name', type: 'string', required: true }],
      strict_params: false,
      subject: 'From {{full_name}}',
      reply_to: '',
    });
    expect(renamed.statusCode, renamed.body).toBe(200);
    expect(renamed.json<Written>().warnings?.[0]?.issues.map((i) => i.param)).toEqual(['full_name']);
  });

  it.skipIf(skip)('over 64 KiB of JSON is 400 invalid_body naming sample_params, in the API and the config file', async () => {
    await seedOrg(t.store);
    const big = { message: 'x'.repeat(64 * 1024) };
    const size = JSON.stringify(big).length;
    const res = await admin(t, 'PATCH', BASE, { sample_params: big });
    const err = expectError(res, 400, 'invalid_body');
    expect(err.details?.fields).toEqual([{ field: 'sample_params', message: `is ${size} bytes of JSON; the limit is 65536` }]);
    expect((await get(t)).sample_params).toBeNull();
    // Just under the limit is stored.
    const fits = { message: 'x'.repeat(64 * 1024 - '{"message":""}'.length) };
    expect((await admin(t, 'PATCH', BASE, { sample_params: fits })).statusCode).toBe(200);
    const yaml = [
      'organizations:',
      '  - id: acme',
      '    templates:',
      '      - id: big',
      '        subject: Hi',
      '        to: a@b.test',
      '        text: Hi',
      '        sample_params:',
      `          message: ${'x'.repeat(64 * 1024)}`,
    ].join('\n');
    expect(() => parseConfigText(yaml, 'mailroom.yaml')).toThrow(
      `templates/0/sample_params: is ${size} bytes of JSON; the limit is 65536`,
    );
  });

  it.skipIf(skip)('the config file stores its sample, and applying the same file again stores no new version', async () => {
    const yaml = [
      'organizations:',
      '  - id: acme',
      '    templates:',
      '      - id: welcome',
      '        subject: Welcome {{name}}',
      '        to: ops@acme.test',
      '        text: Hello {{name}}, your plan is {{plan}}',
      '        params:',
      '          - { name: name, type: string, required: true }',
      '          - { name: plan, type: string, enum: [free, pro] }',
      '        sample_params:',
      '          name: Ada',
      '          plan: pro',
      '          seats: 3',
    ].join('\n');
    await seedOrg(t.store);
    await applyConfig(t.store, parseConfigText(yaml, 'mailroom.yaml'));
    const path = '/organizations/acme/templates/welcome';
    expect(await get(t, path)).toMatchObject({ version: 1, sample_params: { name: 'Ada', plan: 'pro', seats: 3 } });
    const again = await applyConfig(t.store, parseConfigText(yaml, 'mailroom.yaml'));
    expect(again.changes.filter((c) => c.includes('welcome'))).toEqual([]);
    await applyConfig(t.store, parseConfigText(yaml.replace('plan: pro', 'plan: free'), 'mailroom.yaml'));
    expect(await get(t, path)).toMatchObject({ version: 2, sample_params: { name: 'Ada', plan: 'free', seats: 3 } });
  });

  it.skipIf(skip)('each version keeps its sample and a restore brings it back; older versions read as none', async () => {
    await seedOrg(t.store);
    await admin(t, 'PATCH', BASE, { sample_params: SAMPLE });
    await admin(t, 'PATCH', BASE, { sample_params: { ...SAMPLE, name: 'Grace Hopper' } });
    const versions = (await admin(t, 'GET', `${BASE}/versions`)).json<{
      items: Array<{ version: number; template: Written }>;
    }>();
    expect(versions.items.map((v) => [v.version, v.template.sample_params?.name ?? null])).toEqual([
      [3, 'Grace Hopper'],
      [2, 'Ada Lovelace'],
      [1, null],
    ]);
    const restored = await admin(t, 'POST', `${BASE}/versions/2/restore`, {});
    expect(restored.statusCode, restored.body).toBe(200);
    expect(restored.json<Written>()).toMatchObject({ version: 4, sample_params: SAMPLE });
    expect(restored.json<Written>().warnings).toBeUndefined();

    // A version stored before migration 0017 has no sample_params in its JSON: none, and restorable.
    const db = databaseOf(t.store);
    const row = await db.selectFrom('template_versions').select('fields').where('version', '=', 3).executeTakeFirstOrThrow();
    const { sample_params: _gone, ...legacy } = JSON.parse(row.fields) as Record<string, unknown>;
    await db
      .updateTable('template_versions')
      .set({ fields: JSON.stringify(legacy) })
      .where('version', '=', 3)
      .execute();
    const old = (await admin(t, 'GET', `${BASE}/versions`)).json<{ items: Array<{ version: number; template: Written }> }>();
    expect(old.items.find((v) => v.version === 3)?.template.sample_params).toBeNull();
    const back = await admin(t, 'POST', `${BASE}/versions/3/restore`, {});
    expect(back.json<Written>()).toMatchObject({ version: 5, sample_params: null });
  });

  it.skipIf(skip)('render and send test without template_params use the sample: stored, or the draft being edited', async () => {
    await seedOrg(t.store);
    const render = (body: Record<string, unknown>) => admin(t, 'POST', `${BASE}/render`, body);
    const sendTest = (body: Record<string, unknown>) =>
      admin(t, 'POST', `${BASE}/send-test`, { to: 'tester@example.com', ...body });
    // No sample stored: nothing to fall back on, so the required parameters are missing.
    expectError(await render({}), 422, 'invalid_template_params');
    expectError(await sendTest({}), 422, 'invalid_template_params');

    await admin(t, 'PATCH', BASE, { sample_params: SAMPLE });
    const rendered = await render({});
    expect(rendered.statusCode, rendered.body).toBe(200);
    expect(rendered.json<{ subject: string }>().subject).toBe('Message from Ada Lovelace');
    const drafted = await render({ template: { sample_params: { ...SAMPLE, name: 'Grace' } } });
    expect(drafted.json<{ subject: string }>().subject).toBe('Message from Grace');
    // Given parameters win over the sample.
    const given = await render({ template_params: { ...SAMPLE, name: 'Linus' } });
    expect(given.json<{ subject: string }>().subject).toBe('Message from Linus');

    const sent = await sendTest({});
    expect(sent.statusCode, sent.body).toBe(202);
    const id = sent.json<{ message_id: string }>().message_id;
    const message = await admin(t, 'GET', `/organizations/acme/messages/${id}`);
    expect(message.json<{ content: { subject: string } }>().content.subject).toBe('Message from Ada Lovelace');
  });
});
