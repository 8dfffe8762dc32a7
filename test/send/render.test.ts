import { describe, expect, it } from 'vitest';
import { freshAppAll, type TestApp } from '../support/app.js';
import { CONTACT_TEMPLATE, PRIVATE_KEY, seedOrg } from '../support/seed.js';
import { addresses, expectUnchanged, snapshot, storedContent, storedRow } from '../support/stored.js';
import { bearer, expectError } from '../support/http.js';
import { ROOMY, type TemplateSeed } from '../support/orgs.js';
import { send, sendOk } from '../support/send.js';
import { describeDialects } from '../support/dialects.js';

/**
 * Rendering at acceptance (send path step 5, README, Design): Handlebars in every field, escaping
 * only in the HTML body, the rendered email stored with the message, recipient checks after
 * rendering (422 invalid_recipient) and no header injection through parameters.
 */

const GREET: TemplateSeed = {
  id: 'greet',
  subject: 'Hi {{name}}',
  to: '{{to}}',
  cc: '{{cc}}',
  bcc: '{{bcc}}',
  reply_to: '{{reply}}',
  from_name: '{{name}} via Acme',
  from_email: 'noreply@acme.test',
  html:
    '<p>Hello {{name}}</p><div>{{{raw}}}</div>{{#if ' +
    'vip}}<b>VIP</b>{{/if}}<ul>{{#each items}}<li>{{this}}</li>{{/each}}</ul><i>{{user.name}}</i>',
  text: 'Hello {{name}}{{#if vip}} (VIP){{/if}}{{#each items}} [{{this}}]{{/each}} / {{user.name}} / {{{raw}}}',
  allow_dynamic_recipients: true,
  strict_params: false,
  params: [
    { name: 'name', type: 'string' },
    { name: 'to', type: 'string', required: true },
    { name: 'cc', type: 'string' },
    { name: 'bcc', type: 'string' },
    { name: 'reply', type: 'string' },
    { name: 'raw', type: 'html' },
    { name: 'vip', type: 'boolean' },
  ],
};

const BROKEN: TemplateSeed = {
  id: 'broken',
  subject: 'Broken',
  to: 'owner@acme.test',
  from_email: 'noreply@acme.test',
  html: '<p>{{> missing_partial}}</p>',
  text: 'text',
};

const OPTIONAL_TO: TemplateSeed = {
  id: 'optional_to',
  subject: 'Optional',
  to: '{{maybe}}',
  from_email: 'noreply@acme.test',
  text: 'text',
  allow_dynamic_recipients: true,
  params: [{ name: 'maybe', type: 'email' }],
};

describeDialects('rendering at POST /v1/send on %s', (dialect, skip) => {
  let t: TestApp;

  freshAppAll(dialect, skip, async (app) => {
    t = app;
    await seedOrg(t.store, { plan: ROOMY.plan, credits: 1000, templates: [CONTACT_TEMPLATE, GREET, BROKEN, OPTIONAL_TO] });
  });

  const greet = (params: Record<string, unknown>) =>
    send(t, { template_id: 'greet', template_params: { to: 'ann@example.com', ...params } }, bearer(PRIVATE_KEY));

  async function greetOk(params: Record<string, unknown>) {
    const res = await greet(params);
    expect(res.statusCode, res.body).toBe(202);
    const id = res.json<{ message_id: string }>().message_id;
    return { id, content: await storedContent(t, id) };
  }

  async function refused(params: Record<string, unknown>, code: string, status = 422) {
    const before = await snapshot(t, 'acme');
    const err = expectError(await greet(params), status, code);
    await expectUnchanged(t, 'acme', before);
    return err;
  }

  it.skipIf(skip)('{{var}} is HTML-escaped in the HTML body only; subject and text keep it as is', async () => {
    const { id, content } = await greetOk({ name: 'Tom & Jerry <tj@example.com> "q"' });
    expect(content.subject).toBe('Hi Tom & Jerry <tj@example.com> "q"');
    expect(content.text).toContain('Hello Tom & Jerry <tj@example.com> "q"');
    expect(content.html).toContain('<p>Hello Tom &amp; Jerry &lt;tj@example.com&gt; &quot;q&quot;</p>');
    expect(content.html).not.toContain('Tom & Jerry');
    expect(content.from.name).toBe('Tom & Jerry <tj@example.com> "q" via Acme');
    // The subject column (history) carries the same text.
    expect((await storedRow(t, id)).subject).toBe('Hi Tom & Jerry <tj@example.com> "q"');
  });

  it.skipIf(skip)('{{{var}}} is raw in the HTML body', async () => {
    const { content } = await greetOk({ name: 'Ann', raw: '<em>emphasis</em> & more' });
    expect(content.html).toContain('<div><em>emphasis</em> & more</div>');
    expect(content.text).toContain('/ <em>emphasis</em> & more');
  });

  it.skipIf(skip)('{{#if}} sections', async () => {
    const yes = await greetOk({ name: 'Ann', vip: true });
    expect(yes.content.html).toContain('<b>VIP</b>');
    expect(yes.content.text).toContain('Hello Ann (VIP)');
    const no = await greetOk({ name: 'Ann', vip: false });
    expect(no.content.html).not.toContain('VIP');
    expect(no.content.text).not.toContain('VIP');
    const absent = await greetOk({ name: 'Ann' });
    expect(absent.content.html).not.toContain('VIP');
  });

  it.skipIf(skip)('{{#each}} over a list, escaping each item in HTML', async () => {
    const { content } = await greetOk({ name: 'Ann', items: ['one', 'two', '<three>'] });
    expect(content.html).toContain('<ul><li>one</li><li>two</li><li>&lt;three&gt;</li></ul>');
    expect(content.text).toContain('Hello Ann [one] [two] [<three>]');
    const empty = await greetOk({ name: 'Ann', items: [] });
    expect(empty.content.html).toContain('<ul></ul>');
  });

  it.skipIf(skip)('dot paths: {{user.name}}', async () => {
    const { content } = await greetOk({ name: 'Ann', user: { name: 'Bea & Co' } });
    expect(content.html).toContain('<i>Bea &amp; Co</i>');
    expect(content.text).toContain('/ Bea & Co /');
    // A missing path renders empty, it does not fail.
    const missing = await greetOk({ name: 'Ann' });
    expect(missing.content.html).toContain('<i></i>');
  });

  it.skipIf(skip)('the rendered email is stored with the message: recipients, reply-to, sender', async () => {
    const { content } = await greetOk({
      name: 'Ann',
      to: 'ann@example.com, "Doe, Jane" <jane@example.com>',
      cc: 'carl@example.com; dora@example.com',
      bcc: 'Boss <boss@example.com>',
      reply: 'Replies <reply@example.com>',
    });
    expect(addresses(content.to)).toEqual(['ann@example.com', 'jane@example.com']);
    expect(content.to[1]?.name).toBe('Doe, Jane');
    expect(addresses(content.cc)).toEqual(['carl@example.com', 'dora@example.com']);
    expect(addresses(content.bcc)).toEqual(['boss@example.com']);
    expect(addresses(content.reply_to)).toEqual(['reply@example.com']);
    expect(content.from.address).toBe('noreply@acme.test');
    expect(content.subject).toBe('Hi Ann');
  });

  it.skipIf(skip)('a later template edit does not change an already queued message', async () => {
    const first = await greetOk({ name: 'Ann' });
    const template = await t.store.templates.get('acme', 'greet');
    if (template === undefined) throw new Error('template missing');
    const { org_id: _o, id: _i, version: _v, created_at: _c, updated_at: _u, ...fields } = template;
    await t.store.templates.put(
      'acme',
      'greet',
      { ...fields, subject: 'Edited {{name}}', html: '<h1>Edited</h1>', text: 'Edited' },
      t.clock.now(),
    );
    try {
      const second = await greetOk({ name: 'Ann' });
      // The edit is live for new sends...
      expect(second.content.subject).toBe('Edited Ann');
      expect(second.content.html).toBe('<h1>Edited</h1>');
      // ...and the queued message keeps what it was accepted with.
      expect(await storedContent(t, first.id)).toEqual(first.content);
      expect(first.content.subject).toBe('Hi Ann');
      expect((await storedRow(t, first.id)).subject).toBe('Hi Ann');
    } finally {
      await t.store.templates.put('acme', 'greet', fields, t.clock.now());
    }
  });

  describe('422 invalid_recipient', () => {
    it.skipIf(skip)('when the rendered To is not an address', async () => {
      await refused({ to: 'not-an-address' }, 'invalid_recipient');
      await refused({ to: 'Ann <ann@>' }, 'invalid_recipient');
      await refused({ to: 'ann@example.com, nobody' }, 'invalid_recipient');
    });

    it.skipIf(skip)('when the rendered To is empty', async () => {
      await refused({ to: ' ' }, 'invalid_recipient');
      await refused({ to: ' , ; ' }, 'invalid_recipient');
      // A To built from a parameter that was not sent renders as nothing.
      const before = await snapshot(t, 'acme');
      const res = await send(t, { template_id: 'optional_to', template_params: {} }, bearer(PRIVATE_KEY));
      expectError(res, 422, 'invalid_recipient');
      await expectUnchanged(t, 'acme', before);
      await sendOk(t, { template_id: 'optional_to', template_params: { maybe: 'ann@example.com' } }, bearer(PRIVATE_KEY));
    });

    it.skipIf(skip)('for CC, BCC and Reply-To too', async () => {
      await refused({ cc: 'carl-at-example.com' }, 'invalid_recipient');
      await refused({ bcc: 'boss@' }, 'invalid_recipient');
      await refused({ reply: 'reply to me' }, 'invalid_recipient');
    });
  });

  describe('header injection through parameters', () => {
    it.skipIf(skip)('CR/LF in a parameter used in the subject and the From name cannot add a header', async () => {
      for (const name of ['Ann\r\nBcc: evil@x.com', 'Ann\nBcc: evil@x.com', 'Ann\rBcc: evil@x.com']) {
        const { id, content } = await greetOk({ name });
        expect(content.subject).not.toMatch(/[\r\n]/);
        expect(content.subject.startsWith('Hi Ann')).toBe(true);
        expect(content.from.name).not.toMatch(/[\r\n]/);
        expect((await storedRow(t, id)).subject).not.toMatch(/[\r\n]/);
        expect(addresses(content.bcc)).toEqual([]);
        expect(addresses(content.to)).toEqual(['ann@example.com']);
      }
    });

    it.skipIf(skip)('CR/LF in a parameter used in To, CC, BCC or Reply-To → 422 invalid_recipient', async () => {
      await refused({ to: 'victim@example.com\r\nBcc: evil@x.com' }, 'invalid_recipient');
      await refused({ to: 'victim@example.com\nBcc: evil@x.com' }, 'invalid_recipient');
      await refused({ cc: 'carl@example.com\r\nBcc: evil@x.com' }, 'invalid_recipient');
      await refused({ bcc: 'boss@example.com\rX-Injected: 1' }, 'invalid_recipient');
      await refused({ reply: 'reply@example.com\r\nBcc: evil@x.com' }, 'invalid_recipient');
    });
  });

  it.skipIf(skip)('422 template_render_failed when a template compiles but fails to render (missing partial)', async () => {
    const before = await snapshot(t, 'acme');
    const res = await send(t, { template_id: 'broken', template_params: {} }, bearer(PRIVATE_KEY));
    expectError(res, 422, 'template_render_failed');
    await expectUnchanged(t, 'acme', before);
  });
});
