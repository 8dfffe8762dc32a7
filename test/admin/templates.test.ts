import { expect, it } from 'vitest';
import { freshAppEach, type TestApp } from '../support/app.js';
import { PRIVATE_KEY, seedOrg } from '../support/seed.js';
import { admin } from '../support/admin.js';
import { expectError } from '../support/http.js';
import { describeDialects } from '../support/dialects.js';

interface TemplateBody {
  id: string;
  name: string;
  service_id: string | null;
  params: Array<{ name: string; type: string; required?: boolean }>;
  captcha: boolean;
  content: Record<string, string>;
  version: number;
  created_at: string;
  updated_at: string;
}

const WELCOME = {
  name: 'Welcome',
  service_id: 'outbox',
  subject: 'Welcome, {{name}}',
  to: 'owner@acme.test',
  from_email: 'noreply@acme.test',
  html: '<p>Hello {{name}}</p>{{#if code}}<p>{{code}}</p>{{/if}}',
  text: 'Hello {{name}}',
  captcha: true,
  allow_dynamic_recipients: false,
  allow_attachments: false,
  strict_params: false,
  enforce_link_allowlist: false,
  frozen: false,
  params: [
    { name: 'name', type: 'string', required: true },
    { name: 'code', type: 'integer', minimum: 0 },
  ],
};

/** What a template PUT must name (besides `html` or `text`). */
const REQUIRED = [
  'subject',
  'to',
  'from_email',
  'params',
  'service_id',
  'captcha',
  'allow_dynamic_recipients',
  'allow_attachments',
  'strict_params',
  'enforce_link_allowlist',
  'frozen',
];

const send = (t: TestApp, templateId: string, params: Record<string, unknown>) =>
  t.app.inject({
    method: 'POST',
    url: '/v1/send',
    headers: { authorization: `Bearer ${PRIVATE_KEY}` },
    payload: { template_id: templateId, template_params: params },
  });

describeDialects('admin templates on %s', (dialect, skip) => {
  let t!: TestApp;
  freshAppEach(dialect, skip, (app) => {
    t = app;
  });

  it.skipIf(skip)('PUT creates (201) and replaces (200); GET and the list show it; the public API sees it', async () => {
    await seedOrg(t.store);
    const created = await admin(t, 'PUT', '/organizations/acme/templates/welcome', WELCOME);
    expect(created.statusCode, created.body).toBe(201);
    const c = created.json<TemplateBody>();
    expect(c).toMatchObject({
      id: 'welcome',
      name: 'Welcome',
      service_id: 'outbox',
      captcha: true,
      version: 1,
      params: [
        { name: 'name', type: 'string', required: true },
        { name: 'code', type: 'integer', minimum: 0 },
      ],
      content: { subject: 'Welcome, {{name}}', html: WELCOME.html, to: 'owner@acme.test', cc: '' },
    });

    t.clock.advance(2000);
    const replaced = await admin(t, 'PUT', '/organizations/acme/templates/welcome', {
      ...WELCOME,
      name: undefined,
      service_id: null,
      captcha: false,
      params: [],
      subject: 'Hi',
      html: '<p>Hi</p>',
      text: undefined,
    });
    expect(replaced.statusCode, replaced.body).toBe(200);
    const r = replaced.json<TemplateBody>();
    expect(r).toMatchObject({
      name: 'welcome',
      service_id: null,
      captcha: false,
      params: [],
      version: 2,
      updated_at: '2026-01-01T00:00:02.000Z',
    });
    expect(r.content).toMatchObject({ subject: 'Hi', text: '', cc: '' });

    const got = await admin(t, 'GET', '/organizations/acme/templates/welcome');
    expect(got.statusCode).toBe(200);
    expect(got.json<TemplateBody>()).toEqual(r);
    const list = (await admin(t, 'GET', '/organizations/acme/templates')).json<{ items: TemplateBody[] }>().items;
    expect(list.map((x) => x.id)).toEqual(['contact', 'welcome']);

    const pub = await t.app.inject({
      method: 'GET',
      url: '/v1/templates/welcome',
      headers: { authorization: `Bearer ${PRIVATE_KEY}` },
    });
    expect(pub.statusCode).toBe(200);
    expect(pub.json<TemplateBody>().version).toBe(2);
  });

  it.skipIf(skip)(
    'broken Handlebars or an impossible parameter schema is 400 invalid_body naming the field; nothing is stored',
    async () => {
      await seedOrg(t.store);
      const broken = expectError(
        await admin(t, 'PUT', '/organizations/acme/templates/welcome', {
          ...WELCOME,
          subject: 'Hi {{name',
          html: '{{#if x}}unclosed',
        }),
        400,
        'invalid_body',
      );
      expect(broken.details?.fields?.map((f) => f.field)).toEqual(['subject', 'html']);
      expect(broken.details?.fields?.[1]?.message).toContain('not a valid template');

      const params = expectError(
        await admin(t, 'PUT', '/organizations/acme/templates/welcome', {
          ...WELCOME,
          params: [
            { name: 'a', type: 'string', pattern: '(' },
            { name: 'a', type: 'string' },
          ],
        }),
        400,
        'invalid_body',
      );
      expect(params.details?.fields?.map((f) => f.field)).toEqual(['params.0.pattern', 'params.1.name']);

      const schema = expectError(
        await admin(t, 'PUT', '/organizations/acme/templates/welcome', { ...WELCOME, params: [{ name: 'a', type: 'text' }] }),
        400,
        'invalid_body',
      );
      expect(schema.details?.fields?.length).toBeGreaterThan(0);
      expect(await t.store.templates.get('acme', 'welcome')).toBeUndefined();

      // A broken edit leaves the stored template as it was.
      await admin(t, 'PUT', '/organizations/acme/templates/welcome', WELCOME);
      expectError(
        await admin(t, 'PUT', '/organizations/acme/templates/welcome', { ...WELCOME, html: '{{/if}}' }),
        400,
        'invalid_body',
      );
      expect((await t.store.templates.get('acme', 'welcome'))?.html).toBe(WELCOME.html);
    },
  );

  it.skipIf(skip)('a service_id naming no service of the organization is 400 invalid_body', async () => {
    await seedOrg(t.store);
    await seedOrg(t.store, { id: 'other', keys: [], templates: [], services: [{ id: 'theirs', provider: 'outbox' }] });
    for (const serviceId of ['nope', 'theirs']) {
      const err = expectError(
        await admin(t, 'PUT', '/organizations/acme/templates/welcome', { ...WELCOME, service_id: serviceId }),
        400,
        'invalid_body',
      );
      expect(err.details?.fields?.map((f) => f.field)).toEqual(['service_id']);
    }
    expect(await t.store.templates.get('acme', 'welcome')).toBeUndefined();
  });

  it.skipIf(skip)('DELETE: 204, then 404 not_found; unknown templates are 404 not_found', async () => {
    await seedOrg(t.store);
    const del = await admin(t, 'DELETE', '/organizations/acme/templates/contact');
    expect(del.statusCode, del.body).toBe(204);
    expect(await t.store.templates.get('acme', 'contact')).toBeUndefined();
    const again = expectError(await admin(t, 'DELETE', '/organizations/acme/templates/contact'), 404, 'not_found');
    expect(again.message).toContain('contact');
    expectError(await admin(t, 'GET', '/organizations/acme/templates/contact'), 404, 'not_found');
    expectError(await admin(t, 'PUT', '/organizations/ghost/templates/contact', WELCOME), 404, 'not_found');
  });

  it.skipIf(skip)(
    "a template deleted and created again under its id is validated and rendered as the new one, not from the old one's cache",
    async () => {
      await seedOrg(t.store);
      const sendContact = (params: Record<string, unknown>) => send(t, 'contact', params);
      const subjectOf = async (res: { json: <T>() => T }) => {
        const stored = await t.store.messages.content(res.json<{ message_id: string }>().message_id);
        return (JSON.parse(stored?.content ?? '{}') as { subject?: string }).subject;
      };
      const first = await sendContact({ name: 'Ann', email: 'ann@example.org', message: 'hi' });
      expect(first.statusCode, first.body).toBe(202);

      expect((await admin(t, 'DELETE', '/organizations/acme/templates/contact')).statusCode).toBe(204);
      t.clock.advance(1);
      const recreated = await admin(t, 'PUT', '/organizations/acme/templates/contact', {
        ...WELCOME,
        service_id: null,
        captcha: false,
        html: undefined,
        subject: 'New {{title}}',
        to: 'owner@acme.test',
        from_email: 'noreply@acme.test',
        text: 'x',
        strict_params: true,
        params: [{ name: 'title', type: 'string', required: true }],
      });
      expect(recreated.statusCode, recreated.body).toBe(201);
      expect(recreated.json<TemplateBody>().version).toBe(1);

      const fresh = await sendContact({ title: 'T' });
      expect(fresh.statusCode, fresh.body).toBe(202);
      expect(await subjectOf(fresh)).toBe('New T');
      const old = await sendContact({ name: 'Ann', email: 'ann@example.org', message: 'hi' });
      expect(old.statusCode, old.body).toBe(422);
    },
  );

  it.skipIf(skip)('a GET body sent back unchanged is accepted (content nested), changes nothing and still sends', async () => {
    await seedOrg(t.store);
    for (const id of ['contact', 'welcome']) {
      if (id === 'welcome') await admin(t, 'PUT', '/organizations/acme/templates/welcome', { ...WELCOME, captcha: false });
      const before = await t.store.templates.get('acme', id);
      const shown = (await admin(t, 'GET', `/organizations/acme/templates/${id}`)).json<TemplateBody>();
      const again = await admin(t, 'PUT', `/organizations/acme/templates/${id}`, shown);
      expect(again.statusCode, again.body).toBe(200);
      const after = await t.store.templates.get('acme', id);
      expect({ ...after, version: 0, updated_at: 0 }).toEqual({ ...before, version: 0, updated_at: 0 });
    }
    const contact = await send(t, 'contact', { name: 'Ann', email: 'ann@example.org', message: 'hi' });
    expect(contact.statusCode, contact.body).toBe(202);
    const welcome = await send(t, 'welcome', { name: 'Ann', code: 7 });
    expect(welcome.statusCode, welcome.body).toBe(202);
  });

  it.skipIf(skip)(
    'a PUT of only {html} (or lacking any required field) is 400 naming each missing field; the template is untouched',
    async () => {
      await seedOrg(t.store);
      await admin(t, 'PUT', '/organizations/acme/templates/welcome', WELCOME);
      const before = await t.store.templates.get('acme', 'welcome');
      const onlyHtml = expectError(
        await admin(t, 'PUT', '/organizations/acme/templates/welcome', { html: '<p>New</p>' }),
        400,
        'invalid_body',
      );
      expect(onlyHtml.details?.fields?.map((f) => f.field)).toEqual(REQUIRED);
      expect(onlyHtml.message).toContain('subject is required');
      for (const field of REQUIRED) {
        const body: Record<string, unknown> = { ...WELCOME };
        delete body[field];
        const err = expectError(await admin(t, 'PUT', '/organizations/acme/templates/welcome', body), 400, 'invalid_body');
        expect(
          err.details?.fields?.map((f) => f.field),
          field,
        ).toEqual([field]);
      }
      const noBody = expectError(
        await admin(t, 'PUT', '/organizations/acme/templates/welcome', { ...WELCOME, html: undefined, text: undefined }),
        400,
        'invalid_body',
      );
      expect(noBody.details?.fields?.map((f) => f.field)).toEqual(['html']);
      // Required content may come under `content`; the same field twice with two values is refused.
      const { subject, to, from_email: fromEmail, ...rest } = WELCOME;
      const nested = await admin(t, 'PUT', '/organizations/acme/templates/nested', {
        ...rest,
        content: { subject, to, from_email: fromEmail },
      });
      expect(nested.statusCode, nested.body).toBe(201);
      const clash = expectError(
        await admin(t, 'PUT', '/organizations/acme/templates/welcome', { ...WELCOME, content: { subject: 'Other' } }),
        400,
        'invalid_body',
      );
      expect(clash.details?.fields?.map((f) => f.field)).toEqual(['content.subject']);
      const foreign = expectError(
        await admin(t, 'PUT', '/organizations/acme/templates/welcome', { ...WELCOME, id: 'contact' }),
        400,
        'invalid_body',
      );
      expect(foreign.details?.fields?.map((f) => f.field)).toEqual(['id']);
      expect(await t.store.templates.get('acme', 'welcome')).toEqual(before);
    },
  );

  it.skipIf(skip)(
    'PATCH changes only what it names (content flat or nested merges; params replaced whole); unknown fields are 400',
    async () => {
      await seedOrg(t.store);
      await admin(t, 'PUT', '/organizations/acme/templates/welcome', { ...WELCOME, captcha: false });
      const before = (await admin(t, 'GET', '/organizations/acme/templates/welcome')).json<TemplateBody>();
      t.clock.advance(1000);
      const html = await admin(t, 'PATCH', '/organizations/acme/templates/welcome', { html: '<p>Bonjour {{name}}</p>' });
      expect(html.statusCode, html.body).toBe(200);
      expect(html.json<TemplateBody>()).toEqual({
        ...before,
        content: { ...before.content, html: '<p>Bonjour {{name}}</p>' },
        version: 2,
        updated_at: '2026-01-01T00:00:01.000Z',
      });
      const nested = await admin(t, 'PATCH', '/organizations/acme/templates/welcome', {
        content: { subject: 'Salut {{name}}' },
        frozen: false,
      });
      expect(nested.json<TemplateBody>().content).toEqual({
        ...before.content,
        html: '<p>Bonjour {{name}}</p>',
        subject: 'Salut {{name}}',
      });
      const params = await admin(t, 'PATCH', '/organizations/acme/templates/welcome', {
        params: [{ name: 'name', type: 'string' }],
      });
      expect(params.json<TemplateBody>().params).toEqual([{ name: 'name', type: 'string' }]);
      expect(params.json<TemplateBody>()).toMatchObject({
        name: 'Welcome',
        service_id: 'outbox',
        content: { to: 'owner@acme.test' },
      });
      const sent = await send(t, 'welcome', { name: 'Ann' });
      expect(sent.statusCode, sent.body).toBe(202);

      const unknown = expectError(
        await admin(t, 'PATCH', '/organizations/acme/templates/welcome', { colour: 'red' }),
        400,
        'invalid_body',
      );
      expect(unknown.details?.fields?.map((f) => f.field)).toEqual(['colour']);
      const broken = expectError(
        await admin(t, 'PATCH', '/organizations/acme/templates/welcome', { subject: '{{#if x}}' }),
        400,
        'invalid_body',
      );
      expect(broken.details?.fields?.map((f) => f.field)).toEqual(['subject']);
      expect((await t.store.templates.get('acme', 'welcome'))?.subject).toBe('Salut {{name}}');
      expectError(await admin(t, 'PATCH', '/organizations/acme/templates/ghost', { html: 'x' }), 404, 'not_found');
    },
  );
});
