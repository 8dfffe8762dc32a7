/**
 * CSV as RFC 4180 writes it (CRLF line ends; a field with a comma, quote, CR or LF quoted, its
 * quotes doubled), with the spreadsheet guard: a cell starting with = + - @ tab or CR is read as
 * a formula by Excel, LibreOffice and Google Sheets (a subject like `=HYPERLINK(...)` typed by
 * whoever filled a form), so it gets a leading apostrophe and is shown as text.
 */

const FORMULA_LEAD = /^[=+\-@\t\r]/;
const NEEDS_QUOTES = /[",\r\n]/;

export function csvCell(value: string): string {
  const guarded = FORMULA_LEAD.test(value) ? `'${value}` : value;
  return NEEDS_QUOTES.test(guarded) ? `"${guarded.replaceAll('"', '""')}"` : guarded;
}

export const csvRow = (cells: readonly string[]): string => `${cells.map(csvCell).join(',')}\r\n`;
