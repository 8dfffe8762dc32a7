import type { FastifyInstance } from 'fastify';
import { ApiError } from '../errors/api-error.js';

/**
 * Deeper than any template's data needs ({{#each}} over rows of objects is 3–4 levels), far
 * below where recursive code breaks: JSON.stringify overflowed the stack at ~5,000 levels,
 * which a 10 kB body reaches, and that was a 500.
 */
export const MAX_JSON_DEPTH = 64;

/**
 * Why a parsed JSON body cannot be taken, as a field path and a message, or undefined. Walks
 * with its own stack (never recursion) and stops at the first problem:
 * - nesting deeper than MAX_JSON_DEPTH;
 * - a NUL character in any string or key: it has no meaning in an email, and PostgreSQL's text
 *   type cannot hold one (an id or a list lookup with NUL was a 500 there).
 */
export function jsonBodyProblem(value: unknown): { field: string; message: string } | undefined {
  const stack: Array<{ value: unknown; path: string; depth: number }> = [{ value, path: '', depth: 0 }];
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    const { value: v, path, depth } = item;
    if (typeof v === 'string') {
      if (v.includes('\u0000')) return { field: path || 'body', message: 'contains a NUL character' };
      continue;
    }
    if (typeof v !== 'object' || v === null) continue;
    if (depth >= MAX_JSON_DEPTH) return { field: path || 'body', message: `is nested deeper than ${MAX_JSON_DEPTH} levels` };
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) stack.push({ value: v[i] as unknown, path: `${path}[${i}]`, depth: depth + 1 });
      continue;
    }
    for (const [key, child] of Object.entries(v)) {
      const childPath = path === '' ? key : `${path}.${key}`;
      if (key.includes('\u0000'))
        return { field: childPath.replaceAll('\u0000', '\\u0000'), message: 'contains a NUL character' };
      stack.push({ value: child, path: childPath, depth: depth + 1 });
    }
  }
  return undefined;
}

/**
 * JSON bodies through Fastify's own parser (it refuses `__proto__` and `constructor` keys),
 * then jsonBodyProblem: 400 invalid_body naming the field, like any schema failure.
 */
export function installJsonBodyParser(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    parse(request, typeof body === 'string' ? body : body.toString('utf8'), (err, value) => {
      if (err !== null) {
        done(err, undefined);
        return;
      }
      const problem = jsonBodyProblem(value);
      if (problem === undefined) {
        done(null, value);
        return;
      }
      done(
        new ApiError('invalid_body', {
          message: `The request body is invalid: ${problem.field} ${problem.message}.`,
          details: { fields: [problem] },
        }),
        undefined,
      );
    });
  });
}
