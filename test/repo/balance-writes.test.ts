import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../src');

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(p);
    return e.name.endsWith('.ts') ? [p] : [];
  });
}

/**
 * Issue 17 §1: a balance moves only through src/storage/credits.ts. Four places once wrote
 * `credits ± n` themselves (take, holds, top-up and the worker's refund); bounce and complaint
 * events will refund too, and must ask storage (and the refund policy), not write SQL.
 */
describe('balance writes', () => {
  it('only src/storage/credits.ts writes credits ± n', () => {
    const writers = sourceFiles(SRC)
      .filter((f) => !f.includes(`${path.sep}migrations${path.sep}`))
      .filter((f) => /\bcredits\s*[-+]\s*(\d|\$\{)/.test(fs.readFileSync(f, 'utf8')))
      .map((f) => path.relative(SRC, f));
    expect(writers).toEqual([path.join('storage', 'credits.ts')]);
  });
});
