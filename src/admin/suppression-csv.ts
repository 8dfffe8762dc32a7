import { asciiDomain, canonicalAddress } from '../domain/addresses.js';
import { csvRecords, csvRow, isProblem } from '../domain/csv.js';
import { ApiError } from '../errors/api-error.js';
import type { Store } from '../storage/store.js';

/**
 * Suppression lists as CSV (issue 29): an export streamed page by page, and an import that
 * reports each bad line instead of refusing the file.
 */

/** Rows per import: 100,000 addresses take ~3 s to insert on either database in 500-row batches. */
export const IMPORT_MAX_ROWS = 100_000;
/**
 * Bytes per import: 100,000 rows of a typical 30-byte address and a reason fit in ~4 MB; 10 MiB
 * leaves room for long addresses. MAILROOM_BODY_LIMIT_BYTES still applies when it is lower.
 */
export const IMPORT_MAX_BYTES = 10 * 1024 * 1024;
/** Invalid lines listed in the answer; `invalid_count` counts them all. */
export const INVALID_LISTED = 1000;
/** Rows per INSERT and per transaction: 4 parameters a row stays far below SQLite's 32,766. */
const BATCH = 500;
/** Rows per export page (keyset by address, the primary key's order). */
const EXPORT_PAGE = 1000;

export const REASONS = ['manual', 'hard_bounce', 'complaint'] as const;
export const EXPORT_COLUMNS = ['email', 'reason', 'source', 'created_at', 'message_id'] as const;

export interface InvalidLine {
  line: number;
  value: string;
  reason: string;
}

export interface ImportResult {
  /** Data rows read (not counting the header or empty lines). */
  rows: number;
  imported: number;
  already_suppressed: number;
  /** Rows whose address came earlier in the same file. */
  duplicates: number;
  invalid_count: number;
  invalid: InvalidLine[];
}

const CONTROL_OR_SPACE = /[\p{Cc}\s]/u;
/** The export's formula guard (src/domain/csv.ts) taken off again, so an export imports as it was. */
const GUARDED = /^'[=+\-@\t\r]/;

/** The canonical address of a cell, or why it is not one. */
export function importAddress(cell: string): { email: string } | { reason: string } {
  const raw = GUARDED.test(cell.trim()) ? cell.trim().slice(1) : cell.trim();
  if (raw === '') return { reason: 'email is empty' };
  if (raw.length > 254) return { reason: 'email is longer than 254 characters' };
  if (CONTROL_OR_SPACE.test(raw)) return { reason: 'email contains spaces or control characters' };
  const at = raw.lastIndexOf('@');
  if (at <= 0 || asciiDomain(raw.slice(at + 1)) === undefined)
    return { reason: 'email is not an address (local@domain, the domain a host name)' };
  return { email: canonicalAddress(raw) };
}

function badHeader(message: string): ApiError {
  return new ApiError('invalid_body', {
    message: `The CSV header is invalid: ${message}.`,
    details: { fields: [{ field: 'header', message }] },
  });
}

/**
 * Reads `text` (a header row naming `email` and optionally `reason`; other columns, such as the
 * export's, are ignored) and adds its addresses in batches, each batch its own transaction:
 * a failure part way keeps the batches before it, and the answer then is the error.
 */
export async function importSuppressions(store: Store, orgId: string, text: string): Promise<ImportResult> {
  const records = csvRecords(text);
  const head = records.next();
  if (head.done === true) throw badHeader('the file is empty; the first row must name an email column');
  if (isProblem(head.value)) throw badHeader(head.value.reason);
  const names = head.value.cells.map((c) => c.trim().toLowerCase());
  const emailAt = names.indexOf('email');
  const reasonAt = names.indexOf('reason');
  if (emailAt === -1) throw badHeader('the first row must name an email column (and optionally reason)');

  const result: ImportResult = { rows: 0, imported: 0, already_suppressed: 0, duplicates: 0, invalid_count: 0, invalid: [] };
  const invalid = (line: number, value: string, reason: string) => {
    result.invalid_count++;
    if (result.invalid.length < INVALID_LISTED) result.invalid.push({ line, value: value.slice(0, 300), reason });
  };
  const seen = new Set<string>();
  const valid: Array<{ email: string; reason: string }> = [];
  for (const record of records) {
    if (isProblem(record)) {
      invalid(record.line, '', record.reason);
      break;
    }
    result.rows++;
    if (result.rows > IMPORT_MAX_ROWS) {
      throw new ApiError('payload_too_large', {
        message: `A suppression import takes at most ${IMPORT_MAX_ROWS} rows; split the file.`,
        details: { max_rows: IMPORT_MAX_ROWS },
      });
    }
    const cell = record.cells[emailAt];
    if (cell === undefined) {
      invalid(record.line, record.cells.join(','), 'the row has no email cell');
      continue;
    }
    const address = importAddress(cell);
    if ('reason' in address) {
      invalid(record.line, cell, address.reason);
      continue;
    }
    const reason = (reasonAt === -1 ? '' : (record.cells[reasonAt] ?? '')).trim().toLowerCase() || 'manual';
    if (!(REASONS as readonly string[]).includes(reason)) {
      invalid(record.line, cell, `reason must be ${REASONS.join(', ')} or empty (manual)`);
      continue;
    }
    if (seen.has(address.email)) {
      result.duplicates++;
      continue;
    }
    seen.add(address.email);
    valid.push({ email: address.email, reason });
  }

  const now = store.clock.now();
  for (let i = 0; i < valid.length; i += BATCH) {
    const batch = valid.slice(i, i + BATCH);
    const added = await store.transaction((tx) => tx.suppressions.addMany(orgId, batch, now));
    result.imported += added;
    result.already_suppressed += batch.length - added;
  }
  return result;
}

/** The export's lines: the header, then every entry by address, read a keyset page at a time. */
export async function* exportSuppressions(
  store: Pick<Store, 'suppressions'>,
  orgId: string,
  source: (reason: string) => string,
): AsyncGenerator<string> {
  yield csvRow(EXPORT_COLUMNS);
  let after: string | undefined;
  for (;;) {
    const page = await store.suppressions.page(orgId, { after, limit: EXPORT_PAGE });
    if (page.length === 0) return;
    yield page
      .map((s) => csvRow([s.email, s.reason, source(s.reason), new Date(s.created_at).toISOString(), s.message_id]))
      .join('');
    if (page.length < EXPORT_PAGE) return;
    after = page[page.length - 1]?.email;
  }
}
