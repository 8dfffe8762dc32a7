import { expect, it } from 'vitest';
import { freshAppEach, type TestApp } from '../support/app.js';
import { bearer, expectError, expectInvalidField, type ErrorBody } from '../support/http.js';
import { CONTACT_TEMPLATE, PUBLIC_KEY, seedOrg } from '../support/seed.js';
import { PARAMS, send } from '../support/send.js';
import { creditsOf, totalMessageCount } from '../support/stored.js';
import { admin } from '../support/admin.js';
import { describeDialects } from '../support/dialects.js';

interface Rendered {
  subject: string;
  html: string | null;
  text: string | null;
  from: string;
  reply_to: string[];
  to: string[];
  cc: string[];
  bcc: string[];
  service_id: string;
  template_version: number | null;
  recipients: Array<{ address: string; kind: 'to' | 'cc' | 'bcc' }>;
}

const RENDER = '/organizations/acme/templates/contact/render';

const renderV1 = (t: TestApp, id: string, body: unknown, headers: Record<string, string> = bearer()) =>
  t.app.inject({ method: 'POST', url: `/v1/templates/${id}/render`, headers, payload: body as Record<string, unknown> });

describeDialects('template render on %s', (dialect, skip) => {
  let t!: TestApp;
  freshAppEach(dialect, skip, (app) => {
    t = app;
  });

  const seed = () =>
    seedOrg(t.store, {
      services: [
        { id: 'outbox', provider: 'outbox', default: true, from_name: 'Acme Mail' },
        { id: 'second', provider: 'outbox', default: false },
      ],
      templates: [{ ...CONTACT_TEMPLATE, cc: 'audit@acme.test', from_name: '' }],
    });

  it.skipIf(skip)('admin: the stored template, rendered as a send; nothing stored, no credit used', async () => {
    await seed();
    const credits = await creditsOf(t);
    const res = await admin(t, 'POST', RENDER, { template_params: PARAMS });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json<Rendered>()).toEqual({
      subject: 'Message from Ada',
      html: '<p>Hello there</p>',
      text: 'Hello there',
      from: 'Acme Mail <noreply@acme.test>',
      reply_to: ['ada@example.org'],
      to: ['owner@acme.test'],
      cc: ['audit@acme.test'],
      bcc: [],
      service_id: 'outbox',
      template_version: 1,
      recipients: [
        { address: 'owner@acme.test', kind: 'to' },
        { address: 'audit@acme.test', kind: 'cc' },
      ],
      warnings: [],
    });
    // HTML escapes parameters, as a send's HTML does.
    const escaped = await admin(t, 'POST', RENDER, {
      template_params: { ...PARAMS, message: '<b>hi</b>' },
      service_id: 'second',
    });
    expect(escaped.json<Rendered>()).toMatchObject({
      html: '<p>&lt;b&gt;hi&lt;/b&gt;</p>',
      text: '<b>hi</b>',
      service_id: 'second',
    });
    expect(await totalMessageCount(t)).toBe(0);
    expect(await creditsOf(t)).toBe(credits);
  });

  it.skipIf(skip)('admin: 422 issues exactly as a send gets them', async () => {
    await seed();
    const bad = { template_params: { name: 'x'.repeat(101), email: 'not-an-email', extra: 1 } };
    const rendered = expectError(await admin(t, 'POST', RENDER, bad), 422, 'invalid_template_params');
    const sent = expectError(await send(t, { template_id: 'contact', ...bad }, bearer()), 422, 'invalid_template_params');
    expect(rendered.details).toEqual(sent.details);
    expect(rendered.details?.issues?.map((i) => i.param)).toEqual(['name', 'email', 'message', 'extra']);
    // A rendered recipient that is no address: the send's 422 too.
    const draft = await admin(t, 'POST', RENDER, {
      template_params: PARAMS,
      template: { to: '{{name}}', allow_dynamic_recipients: true },
    });
    expectError(draft, 422, 'invalid_recipient');
    // A recipient from parameters on a template that does not allow it: a private-key send's 403.
    const dynamic = await admin(t, 'POST', RENDER, { template_params: PARAMS, template: { to: '{{email}}' } });
    expectError(dynamic, 403, 'dynamic_recipient_not_allowed');
    expectError(await admin(t, 'POST', RENDER, { template_params: PARAMS, service_id: 'nope' }), 404, 'service_not_found');
  });

  it.skipIf(skip)('admin: a draft overrides the stored template without changing it', async () => {
    await seed();
    const res = await admin(t, 'POST', RENDER, {
      template_params: { ...PARAMS, extra: 'ok' },
      template: {
        subject: 'Draft {{name}}',
        content: { html: '<h1>{{extra}}</h1>' },
        strict_params: false,
        bcc: 'hidden@acme.test',
      },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json<Rendered>()).toMatchObject({
      subject: 'Draft Ada',
      html: '<h1>ok</h1>',
      text: 'Hello there',
      bcc: ['hidden@acme.test'],
      template_version: null,
      // Bare addresses, To then Cc then Bcc.
      recipients: [
        { address: 'owner@acme.test', kind: 'to' },
        { address: 'audit@acme.test', kind: 'cc' },
        { address: 'hidden@acme.test', kind: 'bcc' },
      ],
    });
    // A display name stays in `to` and is left out of `recipients`.
    const named = await admin(t, 'POST', RENDER, {
      template_params: PARAMS,
      template: { to: 'Ops Team <ops@acme.test>', cc: '' },
    });
    expect(named.json<Rendered>()).toMatchObject({
      to: ['Ops Team <ops@acme.test>'],
      recipients: [{ address: 'ops@acme.test', kind: 'to' }],
    });
    // A draft's parameter schema is the one checked.
    const stricter = await admin(t, 'POST', RENDER, {
      template_params: PARAMS,
      template: { params: [...(CONTACT_TEMPLATE.params ?? []), { name: 'code', type: 'integer', required: true }] },
    });
    expect(expectError(stricter, 422, 'invalid_template_params').details?.issues).toEqual([
      { param: 'code', code: 'required', message: 'code is required' },
    ]);
    const stored = (await admin(t, 'GET', '/organizations/acme/templates/contact')).json<{
      version: number;
      content: { subject: string };
    }>();
    expect(stored).toMatchObject({ version: 1, content: { subject: 'Message from {{name}}' } });
  });

  it.skipIf(skip)('admin: a draft of a template not stored yet takes the PUT defaults; without a draft it is 404', async () => {
    await seed();
    const url = '/organizations/acme/templates/fresh/render';
    expectError(await admin(t, 'POST', url, { template_params: {} }), 404, 'template_not_found');
    const res = await admin(t, 'POST', url, {
      template_params: { who: 'Bo' },
      template: { subject: 'Hi {{who}}', to: 'x@acme.test', from_email: 'me@acme.test', text: 'Yo {{who}}' },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json<Rendered>()).toEqual({
      subject: 'Hi Bo',
      html: null,
      text: 'Yo Bo',
      from: 'Acme Mail <me@acme.test>',
      reply_to: [],
      to: ['x@acme.test'],
      cc: [],
      bcc: [],
      service_id: 'outbox',
      template_version: null,
      recipients: [{ address: 'x@acme.test', kind: 'to' }],
      warnings: [],
    });
    expect((await admin(t, 'GET', '/organizations/acme/templates/fresh')).statusCode).toBe(404);
    expectError(await admin(t, 'POST', '/organizations/nope/templates/contact/render', {}), 404, 'not_found');
  });

  it.skipIf(skip)('admin: a draft a PUT would refuse is refused the same way', async () => {
    await seed();
    const broken = await admin(t, 'POST', RENDER, { template_params: PARAMS, template: { html: '<p>{{#if name}}</p>' } });
    expectInvalidField(broken, 'html');
    const put = await admin(t, 'PATCH', '/organizations/acme/templates/contact', { html: '<p>{{#if name}}</p>' });
    expect(put.json<ErrorBody>().error).toMatchObject({ code: 'invalid_body', details: broken.json<ErrorBody>().error.details });
    expectInvalidField(
      await admin(t, 'POST', RENDER, { template: { params: [{ name: 'a', type: 'string', pattern: '(' }] } }),
      'params.0.pattern',
    );
    expectInvalidField(await admin(t, 'POST', RENDER, { template: { service_id: 'ghost' } }), 'service_id');
    expectInvalidField(await admin(t, 'POST', RENDER, { template: { id: 'other' } }), 'id');
    expectError(await admin(t, 'POST', RENDER, { template: { nonsense: 1 } }), 400, 'invalid_body');
  });

  it.skipIf(skip)('/v1: a private key renders; a public key is refused; nothing stored, no credit used', async () => {
    await seed();
    const credits = await creditsOf(t);
    const res = await renderV1(t, 'contact', { template_params: PARAMS });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json<Rendered>()).toMatchObject({
      subject: 'Message from Ada',
      to: ['owner@acme.test'],
      template_version: 1,
      recipients: [
        { address: 'owner@acme.test', kind: 'to' },
        { address: 'audit@acme.test', kind: 'cc' },
      ],
    });
    const issues = expectError(
      await renderV1(t, 'contact', { template_params: { name: 'Ada' } }),
      422,
      'invalid_template_params',
    );
    expect(issues.details?.issues?.map((i) => i.param)).toEqual(['email', 'message']);
    expectError(await renderV1(t, 'missing', {}), 404, 'template_not_found');
    expectError(
      await renderV1(t, 'contact', { template_params: PARAMS }, { 'x-mail-public-key': PUBLIC_KEY }),
      403,
      'private_key_required',
    );
    expectError(await renderV1(t, 'contact', { template_params: PARAMS }, {}), 401, 'unauthorized');
    expectError(await renderV1(t, 'contact', { template: { subject: 'x' } }), 400, 'invalid_body');
    expect(await totalMessageCount(t)).toBe(0);
    expect(await creditsOf(t)).toBe(credits);
  });

  it.skipIf(skip)('both: links outside the link domains are refused with the body a send gets', async () => {
    await seedOrg(t.store, {
      security: { allowed_origins: ['example.com'], link_domains: ['acme.test'] },
      templates: [
        {
          ...CONTACT_TEMPLATE,
          enforce_link_allowlist: true,
          html: '<p>{{message}} <a href="https://evil.test/x?u={{email}}">x</a> <img src="https://cdn.acme.test/a.png"></p>',
        },
        { ...CONTACT_TEMPLATE, id: 'open', html: '<a href="https://evil.test/">{{message}}</a>' },
      ],
    });
    const sent = await send(t, { template_id: 'contact', template_params: PARAMS }, bearer());
    const sentError = expectError(sent, 403, 'link_not_allowed');
    expect(sentError.details).toEqual({ hosts: ['evil.test'] });
    for (const res of [
      await admin(t, 'POST', RENDER, { template_params: PARAMS }),
      await renderV1(t, 'contact', { template_params: PARAMS }),
    ]) {
      expect(res.json()).toEqual(sent.json());
      expect(res.statusCode).toBe(403);
    }
    // The links as drafted are checked: a draft that fixes them renders, one that turns enforcement on is refused.
    const fixed = await admin(t, 'POST', RENDER, {
      template_params: PARAMS,
      template: { html: '<a href="https://www.acme.test/">{{message}}</a>' },
    });
    expect(fixed.statusCode, fixed.body).toBe(200);
    const open = '/organizations/acme/templates/open/render';
    expect((await admin(t, 'POST', open, { template_params: PARAMS })).statusCode).toBe(200);
    expect((await renderV1(t, 'open', { template_params: PARAMS })).statusCode).toBe(200);
    const enforced = await admin(t, 'POST', open, { template_params: PARAMS, template: { enforce_link_allowlist: true } });
    expect(expectError(enforced, 403, 'link_not_allowed').details).toEqual({ hosts: ['evil.test'] });
  });

  it.skipIf(skip)('frozen: /v1 refuses as a send does; the admin editor renders with a template_frozen warning', async () => {
    await seedOrg(t.store, { templates: [{ ...CONTACT_TEMPLATE, frozen: true }] });
    const sent = await send(t, { template_id: 'contact', template_params: PARAMS }, bearer());
    expect(expectError(sent, 403, 'plan_limit_reached').details).toEqual({ reason: 'template_frozen' });
    const v1 = await renderV1(t, 'contact', { template_params: PARAMS });
    expect(v1.statusCode).toBe(403);
    expect(v1.json()).toEqual(sent.json());
    // Refused before the parameters are looked at, as a send is.
    expect((await renderV1(t, 'contact', { template_params: {} })).json()).toEqual(sent.json());

    const res = await admin(t, 'POST', RENDER, { template_params: PARAMS });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json<Rendered & { warnings: Array<{ code: string; message: string }> }>();
    expect(body).toMatchObject({ subject: 'Message from Ada', template_version: 1 });
    expect(body.warnings).toEqual([
      { code: 'template_frozen', message: expect.stringContaining('plan_limit_reached') as string },
    ]);
    // Still the send's checks otherwise, and a draft that unfreezes it has no warning.
    expectError(await admin(t, 'POST', RENDER, { template_params: {} }), 422, 'invalid_template_params');
    const unfrozen = await admin(t, 'POST', RENDER, { template_params: PARAMS, template: { frozen: false } });
    expect(unfrozen.json<{ warnings: unknown[] }>().warnings).toEqual([]);
    expect(await totalMessageCount(t)).toBe(0);
  });

  it.skipIf(skip)('both routes are in the OpenAPI document', async () => {
    type Operation = { tags: string[]; security: unknown; requestBody?: unknown; responses: Record<string, unknown> };
    const doc = (await t.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json<{
      paths: Record<string, Record<string, Operation>>;
    }>();
    const v1 = doc.paths['/v1/templates/{id}/render']?.post;
    expect(v1?.tags).toEqual(['templates']);
    expect(v1?.security).toEqual([{ privateKey: [] }]);
    expect(v1?.requestBody).toBeDefined();
    expect(Object.keys(v1?.responses ?? {})).toEqual(expect.arrayContaining(['200', '403', '404', '422']));
    const adminOp = doc.paths['/admin/v1/organizations/{org}/templates/{id}/render']?.post;
    expect(adminOp?.tags).toEqual(['admin']);
    expect(JSON.stringify(adminOp?.responses['200'])).toContain('template_frozen');
    expect(Object.keys(adminOp?.responses ?? {})).toEqual(expect.arrayContaining(['200', '403', '422']));
  });
});
