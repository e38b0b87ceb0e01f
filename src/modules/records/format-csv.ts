/**
 * Writing CSV (RFC 4180), the counterpart of parse-csv.ts: a cell is quoted when it holds a
 * comma, a quote or a line break, with quotes doubled; lines end in \r\n as the RFC says.
 *
 * A spreadsheet opening the file runs a cell that begins with =, +, -, @, a tab or a carriage
 * return as a formula (CSV injection), and record data is whatever callers wrote. Such a cell is
 * written with a single quote in front, as OWASP advises, unless it is a plain number (-5, +1.5e3),
 * which no spreadsheet reads as a formula. docs/import-export.md says what a re-import then gives.
 */

const NEEDS_QUOTES = /[",\r\n]/;
const FORMULA_START = /^[=+\-@\t\r]/;
const PLAIN_NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/** A null cell is left empty; an empty string is written `""`, so an import tells the two apart. */
export function csvLine(cells: readonly (string | null)[]): string {
  return `${cells.map(csvCell).join(',')}\r\n`;
}

function csvCell(text: string | null): string {
  if (text === null) return '';
  if (text === '') return '""';
  const safe = FORMULA_START.test(text) && !PLAIN_NUMBER.test(text) ? `'${text}` : text;
  return NEEDS_QUOTES.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

/**
 * The text of a JSON value in a cell: strings as they are (the empty string too, which csvLine
 * quotes), numbers and booleans as JSON writes them, objects and arrays as JSON text; missing and
 * null are null, an empty cell.
 */
export function cellText(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}
