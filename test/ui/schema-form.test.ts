import { describe, expect, it } from 'vitest';
import {
  addRow,
  constraintsFor,
  emptyRow,
  enumText,
  moveRow,
  parseEnum,
  removeRow,
  rowFromSpec,
  rowsFromSpecs,
  rowsToSpecs,
  updateRow,
} from '../../ui/src/lib/schema-form.js';

describe('the parameter schema form', () => {
  it('offers the constraints the server applies to each type', () => {
    expect(constraintsFor('string')).toEqual(['min_length', 'max_length', 'pattern', 'enum']);
    expect(constraintsFor('email')).toContain('pattern');
    expect(constraintsFor('integer')).toEqual(['minimum', 'maximum', 'enum']);
    expect(constraintsFor('boolean')).toEqual([]);
  });

  it('round-trips a schema through rows', () => {
    const specs = [
      {
        name: 'name',
        type: 'string' as const,
        required: true,
        min_length: 2,
        max_length: 40,
        pattern: '^[A-Z]',
        description: 'Who',
      },
      { name: 'code', type: 'integer' as const, minimum: 1, maximum: 9 },
      { name: 'plan', type: 'string' as const, enum: ['free', 'pro'] },
      { name: 'size', type: 'number' as const, enum: [1, 2.5] },
      { name: 'ok', type: 'boolean' as const },
    ];
    const rows = rowsFromSpecs(specs);
    expect(rows.map((r) => r.key)).toEqual([1, 2, 3, 4, 5]);
    expect(rows[0]?.min_length).toBe('2');
    expect(rows[2]?.enum).toBe('free, pro');
    const back = rowsToSpecs(rows);
    expect(back.issues).toEqual({});
    expect(back.specs).toEqual(specs);
  });

  it('adds rows with a free name and keys, removes and reorders them', () => {
    let rows = addRow([]);
    rows = addRow(rows);
    expect(rows.map((r) => r.name)).toEqual(['param1', 'param2']);
    expect(rows.map((r) => r.key)).toEqual([1, 2]);
    rows = updateRow(rows, 0, { name: 'param3' });
    rows = addRow(rows);
    expect(rows[2]?.name).toBe('param4');
    rows = moveRow(rows, 2, -1);
    expect(rows.map((r) => r.name)).toEqual(['param3', 'param4', 'param2']);
    expect(moveRow(rows, 0, -1).map((r) => r.name)).toEqual(['param3', 'param4', 'param2']);
    expect(moveRow(rows, 2, 1).map((r) => r.name)).toEqual(['param3', 'param4', 'param2']);
    expect(removeRow(rows, 1).map((r) => r.name)).toEqual(['param3', 'param2']);
  });

  it('reports what the server would refuse, keyed like its field names', () => {
    const rows = [
      { ...emptyRow(1, '1bad') },
      { ...emptyRow(2, 'a'), min_length: '5', max_length: '2', pattern: '(' },
      { ...emptyRow(3, 'a'), type: 'integer' as const, minimum: '1.5', maximum: 'x', enum: '1, two' },
      { ...emptyRow(4, 'b'), type: 'number' as const, minimum: '3', maximum: '1', min_length: '-1' },
    ];
    const { issues, specs } = rowsToSpecs(rows);
    expect(Object.keys(issues).sort()).toEqual([
      'params.0.name',
      'params.1.max_length',
      'params.1.pattern',
      'params.2.enum',
      'params.2.maximum',
      'params.2.minimum',
      'params.2.name',
      'params.3.maximum',
    ]);
    expect(issues['params.2.name']).toContain('declared twice');
    // min_length does not apply to a number: left out, not an issue.
    expect(specs[3]).toEqual({ name: 'b', type: 'number', minimum: 3, maximum: 1 });
  });

  it('drops constraints that do not apply to the chosen type', () => {
    const row = { ...rowFromSpec({ name: 'n', type: 'string', min_length: 1, pattern: 'x' }, 1), type: 'boolean' as const };
    expect(rowsToSpecs([row]).specs).toEqual([{ name: 'n', type: 'boolean' }]);
  });

  it('reads enum values as a comma list or a JSON array', () => {
    expect(parseEnum('', false)).toEqual({});
    expect(parseEnum(' a , b ,', false)).toEqual({ values: ['a', 'b'] });
    expect(parseEnum('["a,b", "c"]', false)).toEqual({ values: ['a,b', 'c'] });
    expect(parseEnum('1, 2.5', true)).toEqual({ values: [1, 2.5] });
    expect(parseEnum('1, x', true).error).toBeDefined();
    expect(parseEnum('[1', false).error).toBeDefined();
    expect(enumText(['a,b', 'c'])).toBe('["a,b","c"]');
    expect(enumText([1, 2])).toBe('1, 2');
  });
});
