import { expect, it } from 'vitest';
import { applyConfig } from '../../src/admin/apply.js';
import { freshAppEach, type TestApp } from '../support/app.js';
import { databaseOf } from '../support/db.js';
import { expectError, expectInvalidField } from '../support/http.js';
import { CONTACT_TEMPLATE, seedOrg } from '../support/seed.js';
import { admin } from '../support/admin.js';
import { describeDialects } from '../support/dialects.js';

interface TemplateBody {
  id: string;
  version: number;
  frozen: boolean;
  service_id: string | null;
  content: Record<string, string>;
  created_at: string;
  updated_at: string;
}
interface VersionItem {
  version: number;
  created_at: string;
  current: boolean;
  template: TemplateBody;
}

const BASE = '/organizations/acme/templates/contact';

const versions = async (t: TestApp, path = BASE): Promise<VersionItem[]> => {
  const res = await admin(t, 'GET', `${path}/versions`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json<{ items: VersionItem[] }>().items;
};

describeDialects('template versions on %s', (dialect, skip) => {
  let t!: TestApp;
  freshAppEach(dialect, skip, (app) => {
    t = app;
  });

  it.skipIf(skip)('PUT, PATCH and the config file each store a version, listed newest first', async () => {
    await seedOrg(t.store);
    expect((await versions(t)).map((v) => [v.version, v.current])).toEqual([[1, true]]);

    t.clock.advance(1000);
    const current = (await admin(t, 'GET', BASE)).json<TemplateBody>();
    const put = await admin(t, 'PUT', BASE, { ...current, content: { ...current.content, subject: 'Put {{name}}' } });
    expect(put.statusCode, put.body).toBe(200);
    t.clock.advance(1000);
    const patch = await admin(t, 'PATCH', BASE, { subject: 'Patched {{name}}' });
    expect(patch.statusCode, patch.body).toBe(200);
    t.clock.advance(1000);
    await applyConfig(t.store, {
      organizations: [{ id: 'acme', templates: [{ ...CONTACT_TEMPLATE, subject: 'Applied {{name}}' }] }],
    });
    // Applying the same file again changes nothing, so it stores nothing.
    await applyConfig(t.store, {
      organizations: [{ id: 'acme', templates: [{ ...CONTACT_TEMPLATE, subject: 'Applied {{name}}' }] }],
    });

    const items = await versions(t);
    expect(items.map((v) => [v.version, v.current, v.template.content.subject])).toEqual([
      [4, true, 'Applied {{name}}'],
      [3, false, 'Patched {{name}}'],
      [2, false, 'Put {{name}}'],
      [1, false, 'Message from {{name}}'],
    ]);
    expect(items.map((v) => v.created_at)).toEqual([
      '2026-01-01T00:00:03.000Z',
      '2026-01-01T00:00:02.000Z',
      '2026-01-01T00:00:01.000Z',
      '2026-01-01T00:00:00.000Z',
    ]);
    // The newest version's template is the template as GET shows it.
    expect(items[0]?.template).toEqual((await admin(t, 'GET', BASE)).json<TemplateBody>());
    expect(items[3]?.template).toMatchObject({ id: 'contact', version: 1, updated_at: '2026-01-01T00:00:00.000Z' });
  });

  it.skipIf(skip)('restore writes that version again as a new one; unknown versions and templates are 404', async () => {
    await seedOrg(t.store);
    await admin(t, 'PATCH', BASE, { subject: 'Second', html: '<p>2</p>' });
    await admin(t, 'PATCH', BASE, { frozen: true });
    const restored = await admin(t, 'POST', `${BASE}/versions/1/restore`, {});
    expect(restored.statusCode, restored.body).toBe(200);
    // Content of version 1; `frozen` stays as it is now (a plan's state, not content).
    expect(restored.json<TemplateBody>()).toMatchObject({
      version: 4,
      frozen: true,
      content: { subject: 'Message from {{name}}', html: '<p>{{message}}</p>' },
    });
    const items = await versions(t);
    expect(items.map((v) => [v.version, v.current])).toEqual([
      [4, true],
      [3, false],
      [2, false],
      [1, false],
    ]);
    expect(items[0]?.template.content).toEqual(items[3]?.template.content);

    expectError(await admin(t, 'POST', `${BASE}/versions/9/restore`, {}), 404, 'not_found');
    expectError(await admin(t, 'POST', `${BASE}/versions/0/restore`, {}), 400, 'invalid_body');
    expectError(await admin(t, 'POST', `${BASE}/versions/x/restore`, {}), 400, 'invalid_body');
    expectError(await admin(t, 'GET', '/organizations/acme/templates/nope/versions'), 404, 'not_found');
    expectError(await admin(t, 'POST', '/organizations/acme/templates/nope/versions/1/restore', {}), 404, 'not_found');
    expectError(await admin(t, 'GET', '/organizations/nope/templates/contact/versions'), 404, 'not_found');
  });

  it.skipIf(skip)('a version naming a service that is gone is refused as a PUT would be', async () => {
    await seedOrg(t.store, {
      services: [
        { id: 'outbox', provider: 'outbox', default: true },
        { id: 'old', provider: 'outbox' },
      ],
    });
    await admin(t, 'PATCH', BASE, { service_id: 'old' });
    await admin(t, 'PATCH', BASE, { service_id: null });
    expect((await admin(t, 'DELETE', '/organizations/acme/services/old')).statusCode).toBe(204);
    expectInvalidField(await admin(t, 'POST', `${BASE}/versions/2/restore`, {}), 'service_id');
    expect((await versions(t))[0]?.version).toBe(3);
  });

  it.skipIf(skip)('the newest 50 are kept; a deleted template takes its versions with it', async () => {
    await seedOrg(t.store);
    for (let i = 2; i <= 53; i += 1) {
      const res = await admin(t, 'PATCH', BASE, { subject: `Subject ${i}` });
      expect(res.statusCode, res.body).toBe(200);
    }
    const items = await versions(t);
    expect(items).toHaveLength(50);
    expect(items[0]).toMatchObject({ version: 53, current: true });
    expect(items.at(-1)?.version).toBe(4);
    expectError(await admin(t, 'POST', `${BASE}/versions/3/restore`, {}), 404, 'not_found');

    expect((await admin(t, 'DELETE', BASE)).statusCode).toBe(204);
    const again = await admin(t, 'PUT', BASE, {
      ...CONTACT_TEMPLATE,
      id: undefined,
      service_id: null,
      captcha: false,
      allow_dynamic_recipients: false,
      allow_attachments: false,
      enforce_link_allowlist: false,
      frozen: false,
    });
    expect(again.statusCode, again.body).toBe(201);
    expect((await versions(t)).map((v) => v.version)).toEqual([1]);
  });

  it.skipIf(skip)('a template written before versions were kept lists its current version and can go back to it', async () => {
    await seedOrg(t.store);
    await databaseOf(t.store).deleteFrom('template_versions').execute();
    const legacy = await versions(t);
    expect(legacy.map((v) => [v.version, v.current])).toEqual([[1, true]]);
    expect(legacy[0]?.template).toEqual((await admin(t, 'GET', BASE)).json<TemplateBody>());
    // The first write stores the content it replaces as well.
    await admin(t, 'PATCH', BASE, { subject: 'Changed' });
    expect((await versions(t)).map((v) => [v.version, v.template.content.subject])).toEqual([
      [2, 'Changed'],
      [1, 'Message from {{name}}'],
    ]);
    const back = await admin(t, 'POST', `${BASE}/versions/1/restore`, {});
    expect(back.json<TemplateBody>()).toMatchObject({ version: 3, content: { subject: 'Message from {{name}}' } });
  });

  it.skipIf(skip)('both routes are in the OpenAPI document', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json<{
      paths: Record<string, Record<string, { tags: string[] }>>;
    }>();
    expect(doc.paths['/admin/v1/organizations/{org}/templates/{id}/versions']?.get?.tags).toEqual(['admin']);
    expect(doc.paths['/admin/v1/organizations/{org}/templates/{id}/versions/{version}/restore']?.post?.tags).toEqual(['admin']);
  });
});
