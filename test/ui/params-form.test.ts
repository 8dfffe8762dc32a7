import { describe, expect, it } from 'vitest';
import { carrySamples, describeSpec, paramIssues, sampleFields, sampleParams } from '../../ui/src/lib/params-form.js';
import type { ParamSpec } from '../../ui/src/api/template-types.js';

const SPECS: ParamSpec[] = [
  { name: 'name', type: 'string', required: true, max_length: 40 },
  { name: 'code', type: 'integer', minimum: 1 },
  { name: 'ratio', type: 'number' },
  { name: 'vip', type: 'boolean' },
  { name: 'plan', type: 'string', enum: ['free', 'pro'] },
  { name: 'body', type: 'html' },
  { name: 'email', type: 'email' },
  { name: 'site', type: 'url' },
  { name: 'day', type: 'date' },
];

describe('the sample parameters form', () => {
  it('gives each type its input', () => {
    const fields = sampleFields(SPECS);
    expect(fields.map((f) => f.input)).toEqual([
      'text',
      'number',
      'number',
      'boolean',
      'select',
      'textarea',
      'email',
      'url',
      'text',
    ]);
    expect(fields[0]?.required).toBe(true);
    expect(fields[1]?.step).toBe('1');
    expect(fields[2]?.step).toBe('any');
    expect(fields[3]?.options).toEqual(['true', 'false']);
    expect(fields[4]?.options).toEqual(['free', 'pro']);
    expect(fields[1]?.hint).toBe('integer, at least 1');
    expect(describeSpec({ name: 'x', type: 'string', min_length: 2, max_length: 4, pattern: '^a', description: 'Code' })).toBe(
      'string, 2–4 characters, matching ^a, Code',
    );
  });

  it('types the values as a JSON send would, leaving empty ones out', () => {
    const params = sampleParams(SPECS, {
      name: 'Ada',
      code: '7',
      ratio: '0.5',
      vip: 'false',
      plan: 'pro',
      body: '<b>x</b>',
      email: '',
      site: 'https://x.test',
      day: '2026-11-25',
    });
    expect(params).toEqual({
      name: 'Ada',
      code: 7,
      ratio: 0.5,
      vip: false,
      plan: 'pro',
      body: '<b>x</b>',
      site: 'https://x.test',
      day: '2026-11-25',
    });
    // What does not read as the type goes as typed, for the server to name.
    expect(sampleParams(SPECS, { code: 'abc', vip: 'maybe' })).toEqual({ code: 'abc', vip: 'maybe' });
    expect(sampleParams([{ name: 'n', type: 'integer', enum: [1, 2] }], { n: '2' })).toEqual({ n: 2 });
  });

  it('keeps samples of parameters still declared when the schema changes', () => {
    expect(
      carrySamples(
        [
          { name: 'name', type: 'string' },
          { name: 'only', type: 'string', enum: ['x'] },
          { name: 'new', type: 'string' },
        ],
        { name: 'Ada', gone: '1' },
      ),
    ).toEqual({ name: 'Ada', only: 'x', new: '' });
  });

  it('reads a 422 into issues by parameter and a summary', () => {
    const issues = paramIssues({
      issues: [
        { param: 'code', code: 'minimum', message: 'code must be at least 1' },
        { param: 'code', code: 'type', message: 'second' },
        { field: 'extra', code: 'unknown', message: 'not a parameter' },
        { code: 'x' },
        'junk',
      ],
    });
    expect(issues.byParam).toEqual({ code: 'code must be at least 1', extra: 'not a parameter' });
    expect(issues.summary).toEqual(['code must be at least 1', 'code: second', 'extra: not a parameter', 'x']);
    expect(paramIssues(undefined)).toEqual({ byParam: {}, summary: [] });
  });
});
