import type { FastifyRequest } from 'fastify';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/errors/api-error.js';
import { FIELDS_MAX_BYTES, noteRequestFields, refusedFields } from '../../src/http/refused-fields.js';

/** A request as far as refusedFields reads one: its body and headers. */
const request = (body: unknown, headers: Record<string, string> = {}) => ({ body, headers }) as unknown as FastifyRequest;
const parse = (text: string) => JSON.parse(text) as Record<string, unknown>;

describe('the request log keeps an allowlist of a refused request (issue 29)', () => {
  it('keeps ids, parameter names with their shapes, counts, origin and agent; never keys, tokens or values', () => {
    const body = {
      template_id: 'contact',
      service_id: 'relay',
      user_id: 'pk_live_abcdefghijklmnopqrstuvwx',
      accessToken: 'sk_live_abcdefghijklmnopqrstuvwxyz0123456789',
      turnstile_token: 'XXXX.captcha.token',
      template_params: { name: 'Ada Lovelace', age: 36, tags: ['a', 'b'], vip: true, note: null, more: {} },
      attachments: [{ name: 'a.pdf', data: 'JVBERi0xLjQK' }],
    };
    const err = new ApiError('invalid_template_params', { details: { issues: [{ param: 'email', code: 'required' }] } });
    const text = refusedFields(request(body, { origin: 'https://shop.test', 'user-agent': 'x'.repeat(300) }), err);
    expect(parse(text)).toEqual({
      template_id: 'contact',
      service_id: 'relay',
      template_params: { name: 'string(12)', age: 'number', tags: 'array(2)', vip: 'boolean', note: 'null', more: 'object' },
      attachments: 1,
      origin: 'https://shop.test',
      user_agent: `${'x'.repeat(120)}…`,
      details: { issues: [{ param: 'email', code: 'required' }] },
    });
    for (const secret of ['pk_live', 'sk_live', 'captcha', 'Ada', 'JVBER']) expect(text).not.toContain(secret);
  });

  it('writes a key pasted anywhere as [key], and stays under 2 KiB, dropping the details first', () => {
    const pasted = refusedFields(
      request({ template_id: 'sk_live_abcdefghijklmnopqrstuvwxyz' }),
      new ApiError('template_not_found'),
    );
    expect(parse(pasted)).toEqual({ template_id: '[key]' });
    const params = Object.fromEntries(Array.from({ length: 80 }, (_, i) => [`parameter_name_${i}_${'p'.repeat(40)}`, 'v']));
    const big = refusedFields(
      request({ template_id: 'contact', template_params: params }),
      new ApiError('invalid_template_params', {
        details: { issues: Array.from({ length: 100 }, () => ({ m: 'y'.repeat(50) })) },
      }),
    );
    expect(Buffer.byteLength(big)).toBeLessThanOrEqual(FIELDS_MAX_BYTES);
    expect(parse(big)).toMatchObject({ template_id: 'contact', truncated: true, template_params_count: 80 });
    expect(parse(big).details).toBeUndefined();
  });

  it('a multipart route hands its fields over; the allowlist still applies', () => {
    const req = request(undefined);
    noteRequestFields(req, { template_id: 'contact', template_params: { name: 'Ann' }, accessToken: 'sk_x', attachments: [] });
    expect(parse(refusedFields(req, new ApiError('rate_limited')))).toEqual({
      template_id: 'contact',
      template_params: { name: 'string(3)' },
      attachments: 0,
    });
  });
});
