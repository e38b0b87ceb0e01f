import { pipeline, Readable } from 'node:stream';
import { CsvError, parse } from 'csv-parse';
import { AppError } from '../../errors.js';
import { rowError, type ImportRow } from './import-row.js';
import { utf8Checked } from './utf8-chunks.js';

/**
 * What a CSV cell becomes. A cell is text unless the active schema version types the column:
 * then it is converted, so that `age` = "36" passes `{"type": "integer"}`.
 */
export type CellType = 'integer' | 'number' | 'boolean' | 'json';

export interface CsvOptions {
  /** Column name → type, from csvCellTypes; columns not named stay text. */
  cellTypes: ReadonlyMap<string, CellType>;
  /** A longer row stops the import: past it, where rows begin is no longer known. */
  maxRowBytes: number;
  /** Columns the header must have that are left out of every record (an export's id, createdAt, updatedAt). */
  skipColumns?: ReadonlySet<string>;
}

/**
 * The cell types a schema asks for: each top-level property whose `type` is integer, number,
 * boolean, object or array (or a list of those) and does not also allow a string. Anything the
 * schema says in other ways ($ref, allOf, nested properties) is left to the validator.
 */
export function csvCellTypes(schema: Record<string, unknown> | null): Map<string, CellType> {
  const types = new Map<string, CellType>();
  const properties = schema && Object.hasOwn(schema, 'properties') ? schema.properties : undefined;
  if (typeof properties !== 'object' || properties === null) return types;
  for (const [name, property] of Object.entries(properties as Record<string, unknown>)) {
    // Own properties only: a schema is the caller's JSON.
    const declared = typeof property === 'object' && property !== null && Object.hasOwn(property, 'type') ? (property as { type: unknown }).type : undefined;
    const allowed = new Set((Array.isArray(declared) ? declared : [declared]).filter((t): t is string => typeof t === 'string'));
    if (allowed.size === 0 || allowed.has('string')) continue;
    if (allowed.has('number')) types.set(name, 'number');
    else if (allowed.has('integer')) types.set(name, 'integer');
    else if (allowed.has('boolean')) types.set(name, 'boolean');
    else if (allowed.has('object') || allowed.has('array')) types.set(name, 'json');
  }
  return types;
}

/**
 * A quoted empty cell (`""`), told apart from an empty one: in a text column it is the empty
 * string, where an empty cell leaves the field out. The export writes them so (format-csv.ts).
 */
const QUOTED_EMPTY = Symbol('quoted empty cell');
type Cell = string | typeof QUOTED_EMPTY;

/**
 * Reads CSV (RFC 4180: comma separated, `"` quotes, `""` inside quotes, `\n` or `\r\n`) with
 * csv-parse as it streams. The first row names the fields; each later row becomes one record's
 * data, an empty cell leaving its field out (a quoted empty one is the empty string). `line` is the physical line where the row starts
 * (a quoted cell may span lines). A quoting error stops the import in every mode: after it,
 * where rows begin and end can no longer be trusted.
 */
export async function* parseCsv(chunks: AsyncIterable<Buffer>, options: CsvOptions): AsyncGenerator<ImportRow> {
  const parser = parse({
    bom: true,
    info: true,
    raw: true,
    relax_column_count: true, // a row with a wrong number of cells is refused here, on its own
    skip_empty_lines: true,
    max_record_size: options.maxRowBytes,
    cast: (value, context) => (value === '' && context.quoting ? (QUOTED_EMPTY as unknown as string) : value),
  });
  pipeline(Readable.from(utf8Checked(chunks)), parser, () => undefined);

  let header: string[] | null = null;
  try {
    for await (const entry of parser as AsyncIterable<{ record: Cell[]; info: { lines: number }; raw: string }>) {
      const line = startLine(entry.info.lines, entry.raw);
      if (!header) header = readHeader(entry.record, options.skipColumns);
      else yield toRow(entry.record, line, header, options.cellTypes, options.skipColumns);
    }
  } catch (error) {
    throw error instanceof CsvError ? csvSyntaxError(error, options) : error;
  }
}

/**
 * csv-parse counts the line where a row ends; the row starts that many lines earlier as it has
 * line breaks inside quoted cells. Its raw text may begin with skipped blank lines.
 */
function startLine(endLine: number, raw: string): number {
  const text = raw.replace(/^[\r\n]+/, '').replace(/[\r\n]+$/, '');
  let inner = 0;
  for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) inner += 1;
  return endLine - inner;
}

function readHeader(cells: Cell[], skipColumns: ReadonlySet<string> | undefined): string[] {
  const names = cells.map((cell) => (cell === QUOTED_EMPTY ? '' : cell.trim()));
  const seen = new Set<string>();
  names.forEach((name, index) => {
    if (name === '') throw headerError(`column ${index + 1} of the header row has no name`);
    // Refused as in every JSON body (docs/security.md), so an import stores nothing a create could not.
    if (name === '__proto__') throw headerError('"__proto__" cannot name a column');
    if (seen.has(name)) throw headerError(`the header row names "${name}" twice`);
    seen.add(name);
  });
  for (const name of skipColumns ?? []) {
    if (!seen.has(name)) throw headerError(`skipColumns names "${name}", which the header row does not have`);
  }
  return names;
}

const headerError = (reason: string) =>
  new AppError('INVALID_REQUEST', `Line 1: ${reason}; the first row must name each column once.`, { line: 1, errors: [{ message: reason }] });

function toRow(cells: Cell[], line: number, header: string[], cellTypes: ReadonlyMap<string, CellType>, skipColumns: ReadonlySet<string> | undefined): ImportRow {
  if (cells.length !== header.length) {
    return { line, error: rowError('INVALID_REQUEST', `The row has ${cells.length} cells; the header has ${header.length}.`) };
  }
  // Column names are the caller's: as keys of a null-prototype object they are fields, whatever they say.
  const data: Record<string, unknown> = Object.create(null);
  for (let index = 0; index < cells.length; index += 1) {
    const cell = cells[index]!;
    if (cell === '') continue;
    const name = header[index]!;
    if (skipColumns?.has(name)) continue;
    const type = cellTypes.get(name);
    if (cell === QUOTED_EMPTY) {
      // Only text can be empty; a typed column leaves the field out, as for an empty cell.
      if (type === undefined) data[name] = '';
      continue;
    }
    if (type === undefined) {
      data[name] = cell;
      continue;
    }
    const value = convertCell(cell, type);
    if (value === undefined) {
      const message = `must be ${TYPE_NAMES[type]} (got ${JSON.stringify(cell)})`;
      return { line, error: rowError('SCHEMA_VALIDATION_FAILED', `Column ${name} ${message}.`, { errors: [{ field: `data.${name}`, message }] }) };
    }
    data[name] = value;
  }
  return { line, data };
}

const TYPE_NAMES: Record<CellType, string> = {
  integer: 'an integer',
  number: 'a number',
  boolean: 'true or false',
  json: 'JSON text (an object or array)',
};

const INTEGER = /^[+-]?\d+$/;
const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/** The typed value of a cell, or undefined when the text is not of that type. */
function convertCell(cell: string, type: CellType): unknown {
  const text = cell.trim();
  switch (type) {
    case 'integer': {
      const value = Number(text);
      return INTEGER.test(text) && Number.isSafeInteger(value) ? value : undefined;
    }
    case 'number': {
      const value = Number(text);
      return NUMBER.test(text) && Number.isFinite(value) ? value : undefined;
    }
    case 'boolean': {
      const lower = text.toLowerCase();
      return lower === 'true' ? true : lower === 'false' ? false : undefined;
    }
    case 'json':
      try {
        const value: unknown = JSON.parse(text);
        return typeof value === 'object' && value !== null ? value : undefined;
      } catch {
        return undefined;
      }
  }
}

function csvSyntaxError(error: CsvError, options: CsvOptions): AppError {
  const line = startLine(Number(error.lines ?? 0), String(error.raw ?? ''));
  if (error.code === 'CSV_MAX_RECORD_SIZE') {
    return new AppError('PAYLOAD_TOO_LARGE', `Line ${line}: the row is longer than ${options.maxRowBytes} bytes, the limit for one record.`, {
      line,
      limitBytes: options.maxRowBytes,
      errors: [{ message: 'the row is too long' }],
    });
  }
  const reason =
    error.code === 'CSV_QUOTE_NOT_CLOSED' ? 'a quoted cell is never closed (unbalanced ")' :
    error.code === 'CSV_INVALID_CLOSING_QUOTE' ? 'a closing quote is followed by more text; inside a quoted cell, write a quote as ""' :
    error.code === 'INVALID_OPENING_QUOTE' ? 'a quote appears inside an unquoted cell; quote the whole cell and write the quote as ""' :
    `not valid CSV (${error.message})`;
  return new AppError('INVALID_REQUEST', `Line ${line}: ${reason}.`, { line, errors: [{ message: reason }] });
}
