import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));

/** The product spec lives in shared/ beside the repository (CI clones it there too). */
export const SPEC_PATH = path.resolve(here, '../../../shared/spec/transactional-email-api.md');

export function readSpec(): string | undefined {
  if (fs.existsSync(SPEC_PATH)) return fs.readFileSync(SPEC_PATH, 'utf8');
  if (process.env.CI === 'true') throw new Error(`spec not found at ${SPEC_PATH}`);
  console.warn(`\n*** ${SPEC_PATH} not found: spec-conformance tests are SKIPPED ***\n`);
  return undefined;
}

/** Rows `| 400 | \`bad_request\` | … |` of the spec's Errors table. */
export function specErrorRows(spec: string): Array<{ status: number; code: string }> {
  const rows: Array<{ status: number; code: string }> = [];
  for (const m of spec.matchAll(/^\| (\d{3}) \| `([a-z_]+)` \|/gm)) rows.push({ status: Number(m[1]), code: m[2] ?? '' });
  return rows;
}
