import { describe, expect, it } from 'vitest';
import {
  customHeaderProblems,
  headersColumn,
  headersFromColumn,
  maskedHeaders,
  requestHeaders,
} from '../../src/webhooks/custom-headers.js';

/** src/webhooks/custom-headers.ts alone: the checks, the mask, what an attempt sends and logs. */
describe('webhook custom headers', () => {
  it('accepts token names and plain values, tabs included; ten at most', () => {
    const ok = Array.from({ length: 10 }, (_, i) => ({ name: `X-Key_${i}.v~1`, value: `a\tb ${i}` }));
    expect(customHeaderProblems(ok)).toEqual([]);
    expect(customHeaderProblems([...ok, { name: 'X-More', value: 'v' }])).toEqual([
      { field: 'headers', message: 'may list at most 10 headers (11 given)' },
    ]);
  });

  it('refuses each bad name and value in words, naming the header, never the value', () => {
    const problems = customHeaderProblems([
      { name: '', value: 'v' },
      { name: 'X:Colon', value: 'v' },
      { name: 'CONNECTION', value: 'close' },
      { name: 'x'.repeat(65), value: 'v' },
      { name: 'X-Nul', value: 'zq\u0000xk' },
      { name: 'X-Lf', value: 'zq\nxk' },
      { name: 'X-Del', value: 'zq\u007fxk' },
    ]);
    expect(problems.map((p) => p.field)).toEqual([
      'headers.0.name',
      'headers.1.name',
      'headers.2.name',
      'headers.3.name',
      'headers.4.value',
      'headers.5.value',
      'headers.6.value',
    ]);
    expect(problems[2]?.message).toBe('"CONNECTION" is a hop-by-hop header of the connection: it cannot be set');
    expect(JSON.stringify(problems)).not.toContain('zq');
  });

  it("sends the custom headers beside mailroom's own, which win; logs them masked", () => {
    const signed = { 'content-type': 'application/json', 'webhook-id': 'msg_1.1', 'webhook-signature': 'v1,abc' };
    const { sent, logged } = requestHeaders(
      [
        { name: 'Authorization', value: 'Basic c2VjcmV0' },
        { name: 'Webhook-Id', value: 'forged' },
      ],
      signed,
    );
    expect(sent).toEqual({ Authorization: 'Basic c2VjcmV0', ...signed });
    expect(logged).toEqual({ Authorization: '********', ...signed });
    expect(maskedHeaders([{ name: 'Authorization', value: 'Basic c2VjcmV0' }])).toEqual([
      { name: 'Authorization', value: '********' },
    ]);
  });

  it('reads the stored column back, anything malformed as none', () => {
    const headers = [{ name: 'Authorization', value: 'Basic c2VjcmV0' }];
    expect(headersFromColumn(headersColumn(headers))).toEqual(headers);
    for (const bad of [null, '', 'not json', '{"a":1}', '[{"name":1,"value":"v"}]']) expect(headersFromColumn(bad)).toEqual([]);
  });
});
