/**
 * Writing CSV (RFC 4180), the counterpart of parse-csv.ts: a cell is quoted when it holds a
 * comma, a quote or a line break, with quotes doubled; lines end in \r\n as the RFC says.
 */

const NEEDS_QUOTES = /[",\r\n]/;

export function csvLine(cells: readonly string[]): string {
  return `${cells.map(csvCell).join(',')}\r\n`;
}

function csvCell(text: string): string {
  return NEEDS_QUOTES.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/**
 * The text of a JSON value in a cell: strings as they are, numbers and booleans as JSON writes
 * them, objects and arrays as JSON text; missing and null leave the cell empty.
 */
export function cellText(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}
