import { describe, expect, it } from 'vitest';
import { bestMessage, fieldMessages, plainMessage } from '../../ui/src/lib/field-messages.js';

/** Issue 29: the admin API's JSON Schema wording, shown under each field in words. */
describe('field messages in words', () => {
  it('reads the JSON Schema phrases the admin API sends', () => {
    expect(plainMessage('security.allowed_origins.0', 'must match pattern "^(\\*\\.)?[a-z]"')).toMatch(
      /^must be a domain such as example\.com or \*\.example\.com/,
    );
    expect(plainMessage('max_per_second', 'must be integer')).toBe('must be a whole number');
    expect(plainMessage('max_per_second', 'must be null')).toBe('must be left empty');
    expect(plainMessage('hold_queue_limit', 'must be >= 0')).toBe('must be at least 0');
    expect(plainMessage('name', 'must NOT have more than 200 characters')).toBe('must be at most 200 characters long');
    expect(plainMessage('name', 'must NOT have fewer than 1 characters')).toBe('must not be empty');
    expect(plainMessage('smtp.host', "must have required property 'host'")).toBe('is required');
    expect(plainMessage('to', 'must match format "email"')).toBe('must be an e-mail address');
    expect(plainMessage('x.y', 'must match pattern "^[a-z]+$"')).toBe('is not written the way this setting needs');
    // The server's own sentences are already words.
    expect(plainMessage('link_domains.0', 'is "a b", not a domain name')).toBe('is "a b", not a domain name');
  });

  it("keeps the real problem of a nullable number, not Ajv's `must be null` beside it", () => {
    expect(bestMessage(['must be null', 'must be integer', 'must match a schema in anyOf'])).toBe('must be integer');
    expect(
      fieldMessages([
        { field: 'max_per_second', message: 'must be null' },
        { field: 'max_per_second', message: 'must be integer' },
      ]),
    ).toEqual({ max_per_second: 'must be a whole number' });
  });

  it('names a list entry by its 1-based line, under the list', () => {
    const out = fieldMessages([
      { field: 'security.allowed_origins.0', message: 'must match pattern "^(\\*\\.)?…"' },
      { field: 'security.allowed_origins.2', message: 'must match pattern "^(\\*\\.)?…"' },
    ]);
    expect(out['security.allowed_origins']).toMatch(/^Line 1: must be a domain such.*; Line 3: must be a domain such/);
    expect(out['security.allowed_origins.2']).toMatch(/^must be a domain such/);
  });
});
