import { describe, expect, it } from 'vitest';
import type { Service } from '../../ui/src/api/service-types.js';
import {
  formFromService,
  newServiceForm,
  pickedServices,
  SECRET_MASK,
  serviceBody,
  serviceFormProblems,
  servicesText,
  visibleFields,
} from '../../ui/src/components/service-form.js';

const base = {
  max_per_second: null,
  events_url: 'http://x/v1/provider-events/t',
  version: 1,
  created_at: '',
  updated_at: '',
};

describe('service form', () => {
  it('shows each provider its own block', () => {
    expect(visibleFields('smtp', '').map((f) => f.path)).toContain('smtp.host');
    expect(visibleFields('smtp', '').map((f) => f.path)).toContain('bounce_domain');
    expect(visibleFields('postmark', '').map((f) => f.path)).toEqual(
      expect.arrayContaining(['postmark.server_token', 'postmark.message_stream', 'postmark.endpoint']),
    );
    expect(visibleFields('postmark', '').map((f) => f.path)).not.toContain('smtp.host');
    expect(visibleFields('outbox', '').some((f) => f.path.startsWith('outbox.'))).toBe(false);
    expect(visibleFields('mailgun', 'resend').map((f) => f.path)).toContain('events.secret');
  });

  it('builds a PUT body from a new SMTP form, secrets only when typed', () => {
    const f = newServiceForm();
    f.id = 'sink';
    f.values = {
      'smtp.host': ' 127.0.0.1 ',
      'smtp.port': '2525',
      'smtp.user': '',
      'smtp.pass': '',
      from_email: 'a@b.test',
      max_per_second: '',
    };
    expect(serviceFormProblems(f, true)).toEqual({});
    // `new` is the create page's address: a service named so could never be opened.
    expect(serviceFormProblems({ ...f, id: 'new' }, true).id).toMatch(/"new" is reserved/);
    expect(serviceBody(f)).toEqual({
      provider: 'smtp',
      default: false,
      smtp: { host: '127.0.0.1', port: 2525, secure: false },
      from_email: 'a@b.test',
      failover_on_service_error: false,
    });
    f.values['smtp.pass'] = 'hunter2';
    expect((serviceBody(f).smtp as Record<string, unknown>).pass).toBe('hunter2');
  });

  it('reads a service with its secrets empty, and sends the mask back only for stored ones', () => {
    const s: Service = {
      ...base,
      id: 'pm',
      provider: 'postmark',
      default: true,
      from_email: 'a@b.test',
      postmark: { server_token: SECRET_MASK, message_stream: 'outbound' },
      events: { source: 'postmark', username: 'u', password: SECRET_MASK },
      failover: ['ses', 'smtp'],
    };
    const f = formFromService(s);
    expect(f.values['postmark.server_token']).toBe('');
    expect(f.values['events.password']).toBe('');
    expect(f.values.failover).toBe('ses\nsmtp');
    expect([...f.stored].sort()).toEqual(['events.password', 'postmark.server_token']);
    expect(serviceFormProblems(f, false)).toEqual({});
    expect(serviceBody(f)).toEqual({
      provider: 'postmark',
      default: true,
      postmark: { server_token: SECRET_MASK, message_stream: 'outbound' },
      from_email: 'a@b.test',
      failover: ['ses', 'smtp'],
      failover_on_service_error: false,
      events: { source: 'postmark', username: 'u', password: SECRET_MASK },
    });
    f.values['postmark.server_token'] = 'new-token';
    expect((serviceBody(f).postmark as Record<string, unknown>).server_token).toBe('new-token');
  });

  it("groups a block's settings object apart by its schema's title, and failover is a picked list (issue 29)", () => {
    const fields = visibleFields('smtp', '');
    expect(fields.filter((f) => f.group === 'DKIM signing').map((f) => f.path)).toEqual([
      'smtp.dkim.domain_name',
      'smtp.dkim.key_selector',
      'smtp.dkim.private_key',
    ]);
    expect(fields.find((f) => f.path === 'smtp.host')?.group).toBeUndefined();
    expect(fields.find((f) => f.path === 'failover')?.kind).toBe('services');

    const f = newServiceForm();
    f.id = 'main';
    f.values = { 'smtp.host': 'h.test', 'smtp.port': '25', failover: servicesText(['b', 'c']) };
    expect(serviceFormProblems(f, true)).toEqual({});
    expect(serviceBody(f).failover).toEqual(['b', 'c']);
    expect(pickedServices('')).toEqual([]);
    expect(serviceFormProblems({ ...f, values: { ...f.values, failover: 'b\nmain' } }, true).failover).toBe(
      'cannot name this service itself',
    );
    expect(serviceFormProblems({ ...f, values: { ...f.values, failover: 'b\nb' } }, true).failover).toBe('names a service twice');
  });

  it('names required fields left empty, and a stored secret is not one of them', () => {
    const f = newServiceForm();
    f.provider = 'mailgun';
    f.values = {};
    expect(serviceFormProblems(f, true)).toEqual({
      id: expect.any(String),
      'mailgun.domain': 'is required',
      'mailgun.api_key': 'is required',
    });
    f.stored = new Set(['mailgun.api_key']);
    expect(Object.keys(serviceFormProblems(f, false))).toEqual(['mailgun.domain']);
  });

  it('drops a DKIM block that has only its masked key left', () => {
    const s: Service = {
      ...base,
      id: 'm',
      provider: 'smtp',
      default: false,
      smtp: {
        host: 'h',
        port: 25,
        secure: false,
        user: '',
        pass: '',
        dkim: { domain_name: 'd.test', key_selector: 's', private_key: SECRET_MASK },
      },
    };
    const f = formFromService(s);
    expect((serviceBody(f).smtp as Record<string, unknown>).dkim).toEqual({
      domain_name: 'd.test',
      key_selector: 's',
      private_key: SECRET_MASK,
    });
    f.values['smtp.dkim.domain_name'] = '';
    f.values['smtp.dkim.key_selector'] = '';
    expect((serviceBody(f).smtp as Record<string, unknown>).dkim).toBeUndefined();
  });
});
