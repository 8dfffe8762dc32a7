/**
 * CSV as RFC 4180 writes it, for the admin API's exports and imports (issue 29). Written cells
 * are quoted only when they must be (a comma, quote, CR or LF inside; quotes doubled), and a
 * cell a spreadsheet would run as a formula (leading = + - @ tab or CR, OWASP "CSV injection")
 * gets a leading apostrophe, so opening an export never runs what a stranger typed.
 */

const FORMULA_LEAD = /^[=+\-@\t\r]/;
const MUST_QUOTE = /[",\r\n]/;

/** One cell as written: formula-guarded, then quoted where RFC 4180 requires it. */
export function csvCell(value: string | number | null | undefined): string {
  if (value === null || value === undefined) return '';
  let text = String(value);
  if (typeof value === 'string' && FORMULA_LEAD.test(text)) text = `'${text}`;
  return MUST_QUOTE.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** One record with its CRLF (RFC 4180's line break). */
export function csvRow(cells: ReadonlyArray<string | number | null | undefined>): string {
  return `${cells.map(csvCell).join(',')}\r\n`;
}

/** A record as read, with the 1-based line of the file it starts on. */
export interface CsvRecord {
  line: number;
  cells: string[];
}

/** A record that could not be read (a quote left open to the end of the file). */
export interface CsvProblem {
  line: number;
  reason: string;
}

/**
 * Records of `text` in order: CRLF or LF line breaks, quoted cells that may hold commas, quotes
 * ("") and line breaks, a leading UTF-8 BOM ignored (spreadsheets write one). Empty lines are
 * skipped. A quote left open ends the file with a problem on the line it opened.
 */
export function* csvRecords(text: string): Generator<CsvRecord | CsvProblem> {
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  let line = 1;
  while (i < text.length) {
    const start = line;
    const cells: string[] = [];
    let cell = '';
    let quoted = false;
    let open = false;
    let done = false;
    while (i < text.length && !done) {
      const c = text[i] as string;
      if (open) {
        if (c === '"' && text[i + 1] === '"') {
          cell += '"';
          i += 2;
        } else if (c === '"') {
          open = false;
          i++;
        } else {
          if (c === '\n') line++;
          cell += c;
          i++;
        }
      } else if (c === '"' && cell === '' && !quoted) {
        open = true;
        quoted = true;
        i++;
      } else if (c === ',') {
        cells.push(cell);
        cell = '';
        quoted = false;
        i++;
      } else if (c === '\n' || (c === '\r' && text[i + 1] === '\n')) {
        i += c === '\r' ? 2 : 1;
        line++;
        done = true;
      } else {
        cell += c;
        i++;
      }
    }
    if (open) {
      yield { line: start, reason: 'a quoted cell is not closed before the end of the file' };
      return;
    }
    cells.push(cell);
    if (cells.length === 1 && cells[0] === '' && !quoted) continue;
    yield { line: start, cells };
  }
}

export const isProblem = (r: CsvRecord | CsvProblem): r is CsvProblem => 'reason' in r;
