import { describe, expect, it } from 'vitest';
import type { ParamSpec } from '../../ui/src/api/template-types.js';
import { sampleParams } from '../../ui/src/lib/params-form.js';
import { generateSample, sampleParts, sampleValue } from '../../ui/src/lib/sample-params.js';
import { compileParamsValidator } from '../../src/templates/params.js';

const REQUIRED: ParamSpec[] = [
  { name: 'name', type: 'string', required: true },
  { name: 'email', type: 'email', required: true },
  { name: 'site', type: 'url', required: true },
  { name: 'seats', type: 'integer', required: true },
  { name: 'ratio', type: 'number', required: true },
  { name: 'vip', type: 'boolean', required: true },
  { name: 'plan', type: 'string', enum: ['pro', 'free'], required: true },
  { name: 'day', type: 'date', required: true },
  { name: 'body', type: 'html', required: true },
];

describe('the generated first sample', () => {
  it('gives each required parameter a plausible value of its type, and leaves optional ones out', () => {
    expect(generateSample([...REQUIRED, { name: 'note', type: 'string' }])).toEqual({
      name: 'Ada',
      email: 'ada@example.com',
      site: 'https://example.com/',
      seats: 1,
      ratio: 1,
      vip: true,
      plan: 'pro',
      day: '2026-01-15',
      body: '<strong>example body</strong>',
    });
  });

  it('keeps inside lengths, bounds and allowed values', () => {
    expect(sampleValue({ name: 'id', type: 'string', min_length: 5 })).toBe('example id');
    expect(sampleValue({ name: 'id', type: 'string', min_length: 12 })).toBe('example idexample id');
    expect(sampleValue({ name: 'id', type: 'string', min_length: 5, max_length: 5 })).toBe('examp');
    expect(sampleValue({ name: 'country', type: 'string', max_length: 2 })).toBe('ex');
    // A person's name reads as one, never as the template printing its variable ("Hi name").
    expect(sampleValue({ name: 'first_name', type: 'string' })).toBe('Ada');
    expect(sampleValue({ name: 'note', type: 'string' })).toBe('example note');
    expect(sampleValue({ name: 'n', type: 'integer', minimum: 2.5 })).toBe(3);
    expect(sampleValue({ name: 'n', type: 'integer', maximum: -0.5 })).toBe(-1);
    expect(sampleValue({ name: 'n', type: 'number', minimum: 0.25, maximum: 0.5 })).toBe(0.5);
    expect(sampleValue({ name: 'n', type: 'number', minimum: 2.5 })).toBe(2.5);
    expect(sampleValue({ name: 'level', type: 'integer', enum: [3, 5] })).toBe(3);
  });

  it('passes the server’s own validator, as the form turns it into template_params', () => {
    const specs: ParamSpec[] = [
      ...REQUIRED,
      { name: 'code', type: 'string', required: true, min_length: 6, max_length: 8 },
      { name: 'count', type: 'integer', required: true, minimum: 10, maximum: 20 },
    ];
    const { values, extra } = sampleParts(specs, null);
    expect(extra).toEqual({});
    const params = sampleParams(specs, values);
    expect(compileParamsValidator(specs, true)(params, 'json')).toEqual([]);
  });
});

describe('a stored sample in the form', () => {
  it('becomes text per declared parameter; undeclared names are kept aside, unchanged', () => {
    const specs: ParamSpec[] = [
      { name: 'name', type: 'string', required: true },
      { name: 'seats', type: 'integer' },
      { name: 'vip', type: 'boolean' },
      { name: 'tags', type: 'string' },
    ];
    const parts = sampleParts(specs, { name: 'Ada', seats: 3, vip: false, tags: ['a'], gone: null, items: [{ sku: 1 }] });
    expect(parts.values).toEqual({ name: 'Ada', seats: '3', vip: 'false', tags: '["a"]' });
    expect(parts.extra).toEqual({ gone: null, items: [{ sku: 1 }] });
    // Typed back as a send would carry them: the stored values again.
    expect(sampleParams(specs, parts.values)).toEqual({ name: 'Ada', seats: 3, vip: false, tags: '["a"]' });
  });

  it('is used as stored, never regenerated: an empty stored sample stays empty', () => {
    const specs: ParamSpec[] = [{ name: 'name', type: 'string', required: true }];
    expect(sampleParts(specs, {}).values).toEqual({});
    expect(sampleParts(specs, null).values).toEqual({ name: 'Ada' });
    expect(sampleParts(specs, undefined).values).toEqual({ name: 'Ada' });
  });
});
