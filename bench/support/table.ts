/** A plain-text table: first column left-aligned, the others right-aligned. */
export function formatTable(header: string[], rows: string[][]): string {
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)));
  const line = (cells: string[]) =>
    cells.map((cell, column) => (column === 0 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!))).join('  ').trimEnd();
  return [line(header), widths.map((width) => '-'.repeat(width)).join('  '), ...rows.map(line)].join('\n');
}

export const fixed = (value: number, digits: number): string => (Number.isFinite(value) ? value.toFixed(digits) : 'n/a');
export const thousands = (value: number): string => (Number.isFinite(value) ? Math.round(value).toLocaleString('en-US') : 'n/a');
