/**
 * Rows in the text format of PostgreSQL's COPY: a line per row, its values separated by tabs,
 * NULL written `\N`. Inside a value a backslash starts an escape, and a raw tab, newline or
 * carriage return would end the value or the row; those four are written `\\`, `\t`, `\n` and
 * `\r`, and every other character stands for itself (the text is sent as UTF-8, the client
 * encoding pg sets). PostgreSQL then reads each value with its column type's input function, as
 * it reads the text of a bound parameter: a jsonb column parses the JSON text exactly as an
 * INSERT of the same text would, a text column keeps it as it is.
 *
 * JSON.stringify never writes a raw control character (a newline inside a string becomes the
 * two characters `\` `n`), but it does write backslashes, and other text columns may hold
 * anything: every value is escaped the same way.
 *
 * `values` holds the rows one after another, `columnCount` values each (as insertValues takes
 * them); the result ends with the last row's newline.
 */
export function copyTextRows(values: readonly unknown[], columnCount: number): string {
  if (values.length % columnCount !== 0) throw new Error(`copyTextRows: ${values.length} values do not make whole rows of ${columnCount} columns`);
  let text = '';
  for (let at = 0; at < values.length; at += columnCount) {
    text += copyTextValue(values[at]);
    for (let column = 1; column < columnCount; column++) text += '\t' + copyTextValue(values[at + column]);
    text += '\n';
  }
  return text;
}

const SPECIAL = /[\\\t\n\r]/;
const SPECIALS = /[\\\t\n\r]/g;
const ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };
const escape = (character: string): string => ESCAPES[character]!;

function copyTextValue(value: unknown): string {
  if (typeof value === 'string') return SPECIAL.test(value) ? value.replace(SPECIALS, escape) : value;
  if (value === null || value === undefined) return '\\N';
  if ((typeof value === 'number' && Number.isFinite(value)) || typeof value === 'bigint') return String(value);
  // Nothing else reaches a bulk write; a value that would need its own text form is a bug, not data.
  throw new Error(`copyTextRows: cannot write a value of type ${typeof value} (${String(value)})`);
}
