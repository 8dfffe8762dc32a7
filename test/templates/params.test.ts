import { describe, expect, it } from 'vitest';
import type { ParamSpec } from '../../src/domain/types.js';
import {
  compileParamsValidator,
  DEFAULT_MAX_STRING,
  isEmailAddress,
  templateKey,
  type ParamsSource,
} from '../../src/templates/params.js';

/** compileParamsValidator: one issue per failing parameter, every type, the default limit. */

const codes = (issues: Array<{ param: string; code: string }>) => issues.map((i) => [i.param, i.code]);

function check(spec: Omit<ParamSpec, 'name'>, value: unknown, source: ParamsSource = 'json'): Array<[string, string]> {
  const validate = compileParamsValidator([{ name: 'p', ...spec }], true);
  return codes(validate(value === undefined ? {} : { p: value }, source)) as Array<[string, string]>;
}

describe('compileParamsValidator', () => {
  describe('required', () => {
    it('a missing, null or empty required parameter is one `required` issue', () => {
      for (const v of [undefined, null, '']) expect(check({ type: 'string', required: true }, v)).toEqual([['p', 'required']]);
      expect(check({ type: 'integer', required: true }, undefined)).toEqual([['p', 'required']]);
    });

    it('a missing optional parameter is fine, whatever its other rules', () => {
      expect(check({ type: 'string', min_length: 3, pattern: '^x+$' }, undefined)).toEqual([]);
      expect(check({ type: 'integer', minimum: 5 }, null)).toEqual([]);
      expect(check({ type: 'email' }, '')).toEqual([]);
    });

    it('false and 0 are values, not absence', () => {
      expect(check({ type: 'boolean', required: true }, false)).toEqual([]);
      expect(check({ type: 'integer', required: true }, 0)).toEqual([]);
    });
  });

  describe('types', () => {
    it('text types refuse objects and arrays, from JSON or a form', () => {
      for (const type of ['string', 'html', 'email', 'url', 'date'] as const) {
        for (const source of ['json', 'form'] as const) {
          expect(check({ type }, { a: 1 }, source), type).toEqual([['p', 'type']]);
          expect(check({ type }, ['a'], source), type).toEqual([['p', 'type']]);
        }
      }
    });

    it('text types refuse a JSON number or boolean: it is not a string (issue 11)', () => {
      for (const type of ['string', 'html', 'email', 'url', 'date'] as const) {
        for (const value of [12345, 0, -1.5, true, false]) {
          const issues = compileParamsValidator([{ name: 'p', type }], true)({ p: value }, 'json');
          expect(codes(issues), `${type} ${String(value)}`).toEqual([['p', 'type']]);
          expect(issues[0]?.message).toContain(`not a JSON ${typeof value}`);
        }
      }
      // Even when its text would pass every other rule of the schema.
      expect(check({ type: 'string', min_length: 2, max_length: 5 }, 12345)).toEqual([['p', 'type']]);
      expect(check({ type: 'string', min_length: 2, max_length: 5 }, '12345')).toEqual([]);
    });

    it('a form value is read as text, so the text of a number passes a string parameter', () => {
      expect(check({ type: 'string', min_length: 2, max_length: 5 }, '12345', 'form')).toEqual([]);
      expect(check({ type: 'string', max_length: 3 }, 12345, 'form')).toEqual([['p', 'max_length']]);
    });

    it('integer: whole numbers, also as text; not fractions, words or booleans', () => {
      for (const ok of [0, -3, 7, '7', '-12', ' 8 ']) expect(check({ type: 'integer' }, ok), String(ok)).toEqual([]);
      for (const bad of [1.5, '1.5', 'abc', '7abc', true, [1], { n: 1 }, Number.NaN, Number.POSITIVE_INFINITY]) {
        expect(check({ type: 'integer' }, bad), String(bad)).toEqual([['p', 'type']]);
      }
    });

    it('number: finite numbers, also as text', () => {
      for (const ok of [0, 1.5, -2.25, '3.25', '-0.5', '1e3']) expect(check({ type: 'number' }, ok), String(ok)).toEqual([]);
      for (const bad of ['many', '1,5', '0x10', true, Number.NaN, Number.NEGATIVE_INFINITY, {}]) {
        expect(check({ type: 'number' }, bad), String(bad)).toEqual([['p', 'type']]);
      }
    });

    it('boolean: true/false, also as form text', () => {
      for (const ok of [true, false, 'true', 'false', 'TRUE', 'on', 'off'])
        expect(check({ type: 'boolean' }, ok), String(ok)).toEqual([]);
      for (const bad of ['maybe', 'yes please', 2, {}, []])
        expect(check({ type: 'boolean' }, bad), String(bad)).toEqual([['p', 'type']]);
    });

    it('numbers and booleans read their text forms the same from a form and from JSON', () => {
      for (const source of ['json', 'form'] as const) {
        expect(check({ type: 'integer' }, '42', source)).toEqual([]);
        expect(check({ type: 'number' }, '2.5', source)).toEqual([]);
        for (const b of ['on', 'true', 'off']) expect(check({ type: 'boolean' }, b, source)).toEqual([]);
      }
    });
  });

  describe('formats', () => {
    it('email', () => {
      for (const ok of ['a@b.co', 'first.last+tag@sub.example.com', 'x_y-z@example-domain.org']) {
        expect(check({ type: 'email' }, ok), ok).toEqual([]);
      }
      const bad = [
        'plain',
        'a@b',
        '@example.com',
        'a@',
        'a b@example.com',
        'a@exa mple.com',
        '<a@example.com>',
        'Ann <a@example.com>',
        'a@example.com, b@example.com',
        'a@example.com;b@example.com',
        'a@example.com\r\nBcc: evil@x.com',
        'a@-example.com',
        `${'a'.repeat(250)}@example.com`,
      ];
      for (const v of bad) expect(check({ type: 'email' }, v), JSON.stringify(v)).toEqual([['p', 'format']]);
    });

    it('url: http and https only, with a host', () => {
      for (const ok of ['https://example.com', 'http://example.com/a?b=c#d', 'https://sub.example.com:8443/x']) {
        expect(check({ type: 'url' }, ok), ok).toEqual([]);
      }
      for (const bad of [
        'not a url',
        'javascript:alert(1)',
        'data:text/html,<script>x</script>',
        '//example.com',
        'https://',
        'example.com',
      ]) {
        expect(check({ type: 'url' }, bad), bad).toEqual([['p', 'format']]);
      }
    });

    it('date: ISO 8601 date or date-time', () => {
      for (const ok of ['2026-01-31', '2026-01-31T10:20:30Z', '2026-01-31T10:20:30.123+02:00', '2024-02-29']) {
        expect(check({ type: 'date' }, ok), ok).toEqual([]);
      }
      for (const bad of ['yesterday', '31/01/2026', '2026-13-01', '2026-01-32', '2026-1-5', '20260131']) {
        expect(check({ type: 'date' }, bad), bad).toEqual([['p', 'format']]);
      }
    });

    it('date: a day that does not exist in its month is not a date', () => {
      expect(check({ type: 'date' }, '2026-02-30')).toEqual([['p', 'format']]);
      expect(check({ type: 'date' }, '2025-02-29')).toEqual([['p', 'format']]);
      expect(check({ type: 'date' }, '2026-04-31')).toEqual([['p', 'format']]);
    });
  });

  describe('length, range, pattern, enum', () => {
    it('min_length and max_length are inclusive', () => {
      const spec = { type: 'string', min_length: 2, max_length: 4 } as const;
      expect(check(spec, 'a')).toEqual([['p', 'min_length']]);
      expect(check(spec, 'ab')).toEqual([]);
      expect(check(spec, 'abcd')).toEqual([]);
      expect(check(spec, 'abcde')).toEqual([['p', 'max_length']]);
    });

    it('minimum and maximum are inclusive, for numbers and numeric text', () => {
      const spec = { type: 'number', minimum: 1, maximum: 2.5 } as const;
      expect(check(spec, 0.99)).toEqual([['p', 'minimum']]);
      expect(check(spec, 1)).toEqual([]);
      expect(check(spec, 2.5)).toEqual([]);
      expect(check(spec, '2.6')).toEqual([['p', 'maximum']]);
    });

    it('pattern applies to the whole value only as far as the pattern says', () => {
      expect(check({ type: 'string', pattern: '^[A-Z]{3}$' }, 'ABC')).toEqual([]);
      expect(check({ type: 'string', pattern: '^[A-Z]{3}$' }, 'ABCD')).toEqual([['p', 'pattern']]);
      expect(check({ type: 'string', pattern: '^[A-Z]{3}$' }, 'abc')).toEqual([['p', 'pattern']]);
    });

    it('enum of strings is case-sensitive; enum of numbers takes numeric text', () => {
      expect(check({ type: 'string', enum: ['red', 'green'] }, 'red')).toEqual([]);
      expect(check({ type: 'string', enum: ['red', 'green'] }, 'Red')).toEqual([['p', 'enum']]);
      expect(check({ type: 'integer', enum: [1, 2, 3] }, '2')).toEqual([]);
      expect(check({ type: 'integer', enum: [1, 2, 3] }, 4)).toEqual([['p', 'enum']]);
    });

    it('a parameter that breaks several of its rules gives one issue', () => {
      // Too short and not matching: one failing parameter, one issue.
      const issues = compileParamsValidator([{ name: 'p', type: 'string', min_length: 3, pattern: '^[a-z]+$' }], true)(
        { p: 'A' },
        'json',
      );
      expect(issues.map((i) => i.param)).toEqual(['p']);
    });
  });

  describe('the 50,000-character default', () => {
    it('applies to string and html parameters without max_length', () => {
      expect(DEFAULT_MAX_STRING).toBe(50_000);
      for (const type of ['string', 'html'] as const) {
        expect(check({ type }, 'x'.repeat(50_000)), type).toEqual([]);
        expect(check({ type }, 'x'.repeat(50_001)), type).toEqual([['p', 'max_length']]);
      }
    });

    it('a schema max_length replaces it, above or below', () => {
      expect(check({ type: 'string', max_length: 60_000 }, 'x'.repeat(55_000))).toEqual([]);
      expect(check({ type: 'string', max_length: 10 }, 'x'.repeat(11))).toEqual([['p', 'max_length']]);
    });

    it('applies to undeclared string parameters when unknown ones are allowed', () => {
      const validate = compileParamsValidator([], false);
      expect(validate({ extra: 'x'.repeat(50_000) }, 'json')).toEqual([]);
      expect(codes(validate({ extra: 'x'.repeat(50_001) }, 'json'))).toEqual([['extra', 'max_length']]);
    });
  });

  describe('strict mode', () => {
    const specs: ParamSpec[] = [{ name: 'a', type: 'string' }];

    it('an undeclared parameter is an `unknown` issue in strict mode, one per parameter', () => {
      expect(codes(compileParamsValidator(specs, true)({ a: 'x', b: 1, c: { d: 2 } }, 'json'))).toEqual([
        ['b', 'unknown'],
        ['c', 'unknown'],
      ]);
    });

    it('and accepted otherwise, whatever its shape', () => {
      expect(compileParamsValidator(specs, false)({ a: 'x', b: 1, c: { d: [2] } }, 'json')).toEqual([]);
    });
  });

  it('reports every failing parameter, each with param, code and a message', () => {
    const validate = compileParamsValidator(
      [
        { name: 'name', type: 'string', required: true },
        { name: 'age', type: 'integer', minimum: 18 },
        { name: 'site', type: 'url' },
        { name: 'ok', type: 'string' },
      ],
      true,
    );
    const issues = validate({ age: 12, site: 'nope', ok: 'fine', extra: 1 }, 'json');
    expect(codes(issues).sort()).toEqual([
      ['age', 'minimum'],
      ['extra', 'unknown'],
      ['name', 'required'],
      ['site', 'format'],
    ]);
    for (const issue of issues) {
      expect(Object.keys(issue).sort()).toEqual(['code', 'message', 'param']);
      expect(issue.message.length).toBeGreaterThan(0);
    }
  });
});

describe('isEmailAddress', () => {
  it('accepts plain addresses and refuses anything that could carry a header or a second address', () => {
    expect(isEmailAddress('ann@example.com')).toBe(true);
    for (const bad of [
      'ann@example.com\n',
      'ann@example.com\r\nBcc: x@y.com',
      'ann@example.com,bob@example.com',
      'ann',
      '"a"@example.com',
    ]) {
      expect(isEmailAddress(bad), JSON.stringify(bad)).toBe(false);
    }
  });
});

describe('templateKey', () => {
  it('differs per organization, template and version, so a template edit retires the compiled validator', () => {
    const base = { org_id: 'acme', id: 'contact', version: 1, updated_at: 0 };
    const keys = new Set([
      templateKey(base),
      templateKey({ ...base, version: 2 }),
      // Deleted and created again: version 1 once more, written at another time.
      templateKey({ ...base, updated_at: 1 }),
      templateKey({ ...base, id: 'other' }),
      templateKey({ ...base, org_id: 'other' }),
      // No collision from ids that run into each other.
      templateKey({ org_id: 'acme', id: 'contact1', version: 1, updated_at: 0 }),
      templateKey({ org_id: 'acmecontact', id: '', version: 1, updated_at: 0 }),
    ]);
    expect(keys.size).toBe(7);
    expect(templateKey(base)).toBe(templateKey({ ...base }));
  });
});
