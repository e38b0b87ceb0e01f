/**
 * Writes src/modules/records/record-writers.ts: the functions that turn record rows into views and
 * views into JSON, made from the record's definition (RECORD_FIELDS and the views in
 * record-shape.ts). They run once per record of a page, an export or an import, and on every
 * write, so each is the straight-line code one would write by hand (a loop over the fields costs a
 * call per value and about twice the time per record). Generating them keeps them in step with the
 * definition; committing the result keeps them ordinary code that the compiler checks and a reader
 * can open. Only names from RECORD_FIELDS reach the code, each checked to be a plain identifier.
 *
 * Run after changing a record field or view:  node --import tsx scripts/generate-record-writers.ts
 * (test/record-writers-file.test.ts fails while the committed file differs from what this makes).
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FieldDefinition, FieldKind, StoredKey } from '../src/db/record-fields.js';
import { columnOf, isStored, RECORD_BODY, RECORD_EVENT, RECORD_EXPORT_LINE, RECORD_FIELDS, type RecordKey } from '../src/modules/records/record-shape.js';

export const RECORD_WRITERS_FILE = fileURLToPath(new URL('../src/modules/records/record-writers.ts', import.meta.url));

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

function identifier(name: string): string {
  if (!IDENTIFIER.test(name)) throw new Error(`record writers: ${JSON.stringify(name)} is not a plain identifier`);
  return name;
}

/** Pieces of a JSON text in the generated code: literal text, or a JS expression that gives text. */
type Piece = string | { code: string };

/** The pieces writing the value of `expression` as JSON of its kind. */
function jsonPieces(kind: FieldKind, expression: string): Piece[] {
  switch (kind) {
    case 'id':
    case 'time':
      return ['"', { code: expression }, '"'];
    case 'timeOrNull':
      return [{ code: `(${expression} === null ? 'null' : '"' + ${expression} + '"')` }];
    case 'integer':
      return [{ code: expression }];
    case 'integerOrNull':
      return [{ code: `(${expression} === null ? 'null' : ${expression})` }];
    case 'json':
      // Already JSON text.
      return [{ code: expression }];
    case 'ids':
      return [{ code: `idsJson(${expression})` }];
  }
}

/** The pieces of `{"key":value,…}` for `keys`, each value read by the expression `valueOf` gives. */
function jsonObjectPieces(keys: readonly RecordKey[], valueOf: (key: RecordKey) => string): Piece[] {
  return [...keys.flatMap((key, index) => [`${index === 0 ? '{' : ','}"${identifier(key)}":`, ...jsonPieces(RECORD_FIELDS[key].kind, valueOf(key))]), '}'];
}

/** One string expression concatenating the pieces, adjacent literals joined; it starts with a literal, so every value joins a string. */
function concatenation(pieces: readonly Piece[]): string {
  const terms: string[] = [];
  let literal = '';
  for (const piece of pieces) {
    if (typeof piece === 'string') {
      literal += piece;
      continue;
    }
    if (literal !== '' || terms.length === 0) terms.push(JSON.stringify(literal));
    literal = '';
    terms.push(piece.code);
  }
  if (literal !== '') terms.push(JSON.stringify(literal));
  return terms.join(' + ');
}

/** The property of a RecordRead that holds a field. */
const readProperty = (key: RecordKey): string => (RECORD_FIELDS[key].kind === 'json' ? `${key}Json` : key);

/** The expression of a stored field read from `row`; nullable ones read absent as null. */
function rowValue(key: StoredKey): string {
  const { column, kind } = RECORD_FIELDS[key];
  const value = `row.${identifier(column)}`;
  return kind === 'timeOrNull' || kind === 'integerOrNull' ? `(${value} ?? null)` : value;
}

/** The expression of a new record's field read from `record` (a NewRecord). */
function createdValue(key: RecordKey): string {
  const { created } = RECORD_FIELDS[key] as FieldDefinition;
  if (created === undefined) throw new Error(`record writers: ${key} has no value in a new record`);
  return typeof created === 'object' ? JSON.stringify(created.value) : `record.${identifier(created)}`;
}

const storedKeys = (Object.keys(RECORD_FIELDS) as RecordKey[]).filter(isStored);
const objectLiteral = (entries: string[]): string => `{\n    ${entries.join(',\n    ')},\n  }`;

/** Each writer: its comment, its signature and its body. */
const WRITERS: { doc: string; signature: string; body: string }[] = [
  {
    doc: `/**
 * A record read for an answer from a row of RECORD_LISTED_COLUMNS (RecordReadRow): pinned fields
 * come from \`pinned\` (the scope of the query), files start empty (withAttachedFiles fills them),
 * and a nullable column the row was read without is null.
 */`,
    signature: 'toRecordRead(dialect: Dialect, row: RecordReadRow, pinned: RecordPinned): RecordRead',
    body: `return ${objectLiteral(
      RECORD_BODY.map((key) => {
        const property = identifier(readProperty(key));
        if (!isStored(key)) return `${property}: []`;
        if ('pinned' in RECORD_FIELDS[key]) return `${property}: pinned.${identifier(key)}`;
        return `${property}: ${RECORD_FIELDS[key].kind === 'json' ? `dialect.jsonText(${rowValue(key)})` : rowValue(key)}`;
      }),
    )};`,
  },
  {
    doc: '/** The JSON of a read record, as RecordBody writes it: each JSON field goes in as the text it is. */',
    signature: 'recordJson(record: RecordRead): string',
    body: `return ${concatenation(jsonObjectPieces(RECORD_BODY, (key) => `record.${identifier(readProperty(key))}`))};`,
  },
  {
    doc: '/** A line of the NDJSON export (without its line break) from a row of RECORD_EXPORT_COLUMNS. */',
    signature: 'exportLineJson(dialect: Dialect, row: RecordExportRow): string',
    body: `return ${concatenation(
      jsonObjectPieces(RECORD_EXPORT_LINE, (key) => {
        if (!isStored(key)) throw new Error(`record writers: ${key} is not stored, so not exported`);
        return RECORD_FIELDS[key].kind === 'json' ? `dialect.jsonText(${rowValue(key)})` : rowValue(key);
      }),
    )};`,
  },
  {
    doc: `/**
 * Puts a new record's values into \`values\` from \`offset\`, in the order of RECORD_COLUMNS (one
 * row of a bulk write: a multi-row INSERT, or a COPY on PostgreSQL, Dialect.prepareRows); returns
 * the offset after them.
 */`,
    signature: 'putNewRecordValues(values: unknown[], offset: number, record: NewRecord): number',
    body: `${storedKeys.map((key) => `values[offset++] = ${createdValue(key)};`).join('\n  ')}\n  return offset;`,
  },
  {
    doc: "/** A new record's row. */",
    signature: 'newRecordRow(record: NewRecord): RecordsTable',
    body: `return ${objectLiteral(storedKeys.map((key) => `${identifier(columnOf(key))}: ${createdValue(key)}`))};`,
  },
  {
    doc: '/** The data of a record.* event, `{record: {id, data}}` (RECORD_EVENT), for emitEvent. */',
    signature: 'recordEventData(record: RecordEventSource): { record: Record<string, unknown> }',
    body: `return { record: ${objectLiteral(RECORD_EVENT.map((key) => `${identifier(key)}: record.${identifier(key)}`))} };`,
  },
  {
    doc: `/**
 * The record.created event's data for a new record, as JSON text: what JSON.stringify of
 * recordEventData gives, put together around the record's data as it is stored (an import's
 * EventBatch), so the data is not serialised a second time.
 */`,
    signature: 'newRecordEventJson(record: NewRecord): string',
    body: `return ${concatenation(['{"record":', ...jsonObjectPieces(RECORD_EVENT, (key) => createdValue(key)), '}'])};`,
  },
  {
    doc: `/**
 * A record's view from its whole row, files empty (withAttachedFiles fills them). \`data\`: the
 * record's data when the caller holds it already (a write), which then is not parsed again.
 */`,
    signature: 'toRecordView(dialect: Dialect, row: RecordsTable, data?: RecordData): RecordView',
    body: `return ${objectLiteral(
      RECORD_BODY.map((key) => {
        if (!isStored(key)) return `${identifier(key)}: []`;
        const value = `row.${identifier(columnOf(key))}`;
        if (RECORD_FIELDS[key].kind !== 'json') return `${identifier(key)}: ${value}`;
        return `${identifier(key)}: ${key === 'data' ? 'data !== undefined ? data : ' : ''}(dialect.readJson(${value}) as RecordData)`;
      }),
    )};`,
  },
];

/** The text of record-writers.ts as the definition makes it now. */
export function recordWritersSource(): string {
  return `// Generated by scripts/generate-record-writers.ts from the record's definition: do not edit by hand.
// Change RECORD_FIELDS (db/record-fields.ts) or the views (record-shape.ts), then run
//   node --import tsx scripts/generate-record-writers.ts
import type { Dialect } from '../../db/dialect.js';
import type { NewRecord, RecordData, RecordEventSource, RecordExportRow, RecordPinned, RecordRead, RecordReadRow, RecordsTable, RecordView } from './record-shape.js';

/** Ids as a JSON array: they need no escaping (StoredTypes.id). */
const idsJson = (ids: readonly string[]): string => (ids.length === 0 ? '[]' : \`["\${ids.join('","')}"]\`);

${WRITERS.map(({ doc, signature, body }) => `${doc}\nexport function ${signature} {\n  ${body}\n}\n`).join('\n')}`;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  writeFileSync(RECORD_WRITERS_FILE, recordWritersSource());
  console.log(`wrote ${path.relative(process.cwd(), RECORD_WRITERS_FILE)}`);
}
