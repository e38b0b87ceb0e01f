import { jsonRefusal } from '../../accepted-json.js';
import path from 'node:path';
import type { Readable } from 'node:stream';
import type { Config } from '../../config.js';
import type { Deps } from '../../deps.js';
import { dialectOf, writeJson, type PreparedRows } from '../../db/dialect.js';
import type { CollectionsTable, Executor } from '../../db/schema.js';
import { AppError } from '../../errors.js';
import { newId } from '../../ids.js';
import { isDiskError, spoolToFile, type SpooledFile } from '../../storage/spool-file.js';
import { recordAudit } from '../audit/audit.js';
import { findCollection, type CollectionContext } from '../collections/collections.js';
import { announceEvents, EventBatch, startImportEvents } from '../events/outbox.js';
import { getSchemaVersion, recordChecker } from '../schemas/schema-versions.js';
import { importFailure, rowError, type ImportRow, type RowError } from './import-row.js';
import { csvCellTypes, parseCsv } from './parse-csv.js';
import { parseJsonArray } from './parse-json-array.js';
import { parseNdjson } from './parse-ndjson.js';
import { keepImportedVersions } from '../history/record-versions.js';
import { newRecordEventJson, putNewRecordValues, RECORD_COLUMNS, type NewRecord } from './record-shape.js';

export type ImportFormat = 'ndjson' | 'json' | 'csv';

/** `all`: the first refused row stops the import and nothing is kept. `partial`: refused rows are reported, the rest kept. */
export type ImportMode = 'all' | 'partial';

export interface ImportInput {
  format: ImportFormat;
  mode: ImportMode;
  /** The body as it arrives: read once, in order, never held whole. */
  body: AsyncIterable<Buffer | string> | Iterable<Buffer | string>;
  /** CSV only: columns of the header to leave out (an export's id, createdAt, updatedAt). */
  skipColumns?: readonly string[];
}

export interface RejectedRow {
  line: number;
  error: RowError;
}

export interface ImportReport {
  imported: number;
  /** The first MAX_REPORTED_REJECTIONS refused rows; rejectedCount counts them all. */
  rejected: RejectedRow[];
  rejectedCount: number;
}

/**
 * Rows per batch. On SQLite a batch is one multi-row INSERT of records and one of events: 2,000
 * records are 18,000 bound values, under SQLite's 32,766. Each statement inside the import's
 * transaction makes SQLite keep a statement journal of the pages it changes (the hot pages of
 * every index, ~120 for the bench's collection), so fewer, larger statements write less: 2,000
 * rather than 500 cut an import's file writes by 30%. On PostgreSQL a batch is one COPY of the
 * records and one of their events; batches of 10,000 measured no faster (the COPYs alone).
 */
const BATCH_ROWS = 2000;
/**
 * A batch also ends once its records' JSON reaches this many characters, so that a body of large
 * records (up to PLAINBASE_BODY_LIMIT each) is not held 2,000 at a time, and a batch's COPY text
 * on PostgreSQL stays far below the longest string V8 can make (~512 M characters).
 */
const BATCH_CHARS = 16 * 1024 * 1024;
export const MAX_REPORTED_REJECTIONS = 1000;

/**
 * Imports records from a streamed body (NDJSON, a JSON array or CSV) into a collection, each
 * checked like a created record (a JSON object, valid under the active schema version), with one
 * record.created event each. Everything happens in one transaction, so an import is kept whole or
 * not at all: a refused row in `all` mode, a body over PLAINBASE_IMPORT_LIMIT or a broken body
 * rolls back every row already written (on PostgreSQL, every batch already COPYed). Rows are
 * written BATCH_ROWS at a time, so memory stays flat whatever the size of the body.
 *
 * The body is first spooled to a file in the data folder, and the transaction opens only once it
 * has arrived whole: a transaction never waits on the network, so a client sending its body
 * slowly holds nobody up (on SQLite the transaction holds the one connection every request
 * uses). The file is removed when the import ends, whichever way (docs/import-export.md).
 */
export async function importRecords(deps: Deps, context: CollectionContext, idOrName: string, input: ImportInput): Promise<ImportReport> {
  // A wrong collection is answered before a byte of the body is read.
  await findCollection(deps.db, context.workspaceId, idOrName);
  const spooled = await spoolBody(input.body, deps.config);
  const body = spooled.read();
  try {
    return await importSpooled(deps, context, idOrName, input, body);
  } finally {
    // Closed even when the import stopped before reading it all (a refused row, a broken body).
    body.destroy();
    await spooled.remove();
  }
}

async function importSpooled(deps: Deps, context: CollectionContext, idOrName: string, input: ImportInput, body: Readable): Promise<ImportReport> {
  const now = deps.clock.now();
  return deps.db.transaction().execute(async (trx) => {
    const collection = await findCollection(trx, context.workspaceId, idOrName);
    const check = await recordChecker(trx, collection);
    const rows = await parseBody(trx, collection, input, body, deps.config);
    const unit = input.format === 'json' ? 'Item' : 'Line';
    const report: ImportReport = { imported: 0, rejected: [], rejectedCount: 0 };
    const batch = recordBatch(trx, collection, now, await startImportEvents(trx, now, collection.workspace_id));

    try {
      for await (const row of rows) {
        const accepted = 'error' in row ? row : acceptRow(row.line, row.data, check, deps.config.bodyLimitBytes);
        if ('error' in accepted) {
          if (input.mode === 'all') throw importFailure(unit, accepted.line, accepted.error);
          report.rejectedCount += 1;
          if (report.rejected.length < MAX_REPORTED_REJECTIONS) report.rejected.push({ line: accepted.line, error: accepted.error });
          continue;
        }
        // Counted as rows are accepted: the rest of the body is not read, and the rollback keeps nothing.
        if (batch.count() >= deps.config.importMaxRecords) throw importTooManyRecords(deps.config.importMaxRecords);
        if (batch.add(accepted)) await batch.flush();
      }
      await batch.flush();
      await batch.settled();
      // Once for the whole import: the workers read the outbox in batches of their own.
      if (batch.written() > 0) await announceEvents(trx);
    } catch (error) {
      // A write still in flight must finish before the transaction rolls back: sent after the
      // ROLLBACK, it would run outside the transaction and be kept.
      await batch.settled().catch(() => undefined);
      throw error;
    }
    report.imported = batch.written();
    // Every imported record's first version, in one statement over the ids the import made.
    const ids = batch.idRange();
    if (ids) await keepImportedVersions(trx, { workspaceId: context.workspaceId, collectionId: collection.id, ...ids, at: now }, context);

    // One entry for the whole import: who brought how many records in (per-record entries would
    // double a large import, and each record already has its event).
    await recordAudit(trx, now, context.meta, {
      workspaceId: context.workspaceId,
      actor: context.actor,
      action: 'collection.records_imported',
      target: { type: 'collection', id: collection.id },
      details: { collectionId: collection.id, format: input.format, mode: input.mode, imported: report.imported, rejectedCount: report.rejectedCount },
    });
    return report;
  });
}

async function parseBody(executor: Executor, collection: CollectionsTable, input: ImportInput, chunks: AsyncIterable<Buffer>, config: Config): Promise<AsyncIterable<ImportRow>> {
  // One record is held to the limit of a single JSON request body, however it arrives.
  const maxRecordBytes = config.bodyLimitBytes;
  switch (input.format) {
    case 'ndjson':
      return parseNdjson(chunks, { maxLineBytes: maxRecordBytes });
    case 'json':
      return parseJsonArray(chunks);
    case 'csv': {
      const version = collection.active_schema_version;
      const schema = version === null ? null : (await getSchemaVersion(executor, collection.workspace_id, collection.id, version)).schema;
      return parseCsv(chunks, { cellTypes: csvCellTypes(schema), maxRowBytes: maxRecordBytes, skipColumns: new Set(input.skipColumns ?? []) });
    }
  }
}

/** The answer to an import of more records than PLAINBASE_IMPORT_MAX_RECORDS. */
export const importTooManyRecords = (limit: number): AppError =>
  new AppError('PAYLOAD_TOO_LARGE', `The import has more than ${limit} records (PLAINBASE_IMPORT_MAX_RECORDS); nothing was imported.`, { limitRecords: limit });

/**
 * The body, whole, in a file under the data folder (bounded by PLAINBASE_IMPORT_LIMIT as it
 * arrives). A disk that cannot take it is the server's trouble, not the caller's: 503.
 */
async function spoolBody(body: ImportInput['body'], config: Config): Promise<SpooledFile> {
  try {
    return await spoolToFile(limitBytes(body, config.importLimitBytes), path.join(config.dataDir, 'imports'));
  } catch (error) {
    if (!isDiskError(error)) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    throw new AppError('UNAVAILABLE', `The server cannot hold the import on its disk (${code} in PLAINBASE_DATA_DIR); nothing was imported.`);
  }
}

/** The answer to an import body over PLAINBASE_IMPORT_LIMIT, declared or counted. */
export const importTooLarge = (limit: number): AppError =>
  new AppError('PAYLOAD_TOO_LARGE', `The import is larger than ${limit} bytes (PLAINBASE_IMPORT_LIMIT); nothing was imported.`, { limitBytes: limit });

/**
 * Counts the body's bytes as they arrive: the HTTP layer cannot, since the body is streamed to
 * the spool file instead of buffered. Past the limit the import fails before it begins.
 */
async function* limitBytes(chunks: ImportInput['body'], limit: number): AsyncGenerator<Buffer> {
  let total = 0;
  for await (const chunk of chunks) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    total += bytes.length;
    if (total > limit) throw importTooLarge(limit);
    yield bytes;
  }
}

interface AcceptedRow {
  /** The record's data as stored: JSON text. */
  json: string;
  schemaVersion: number | null;
}

/** Checks one row as createRecord checks a record; returns why not, or the row ready to write. */
function acceptRow(
  line: number,
  data: unknown,
  check: (data: unknown) => number | null,
  maxRecordBytes: number,
): AcceptedRow | { line: number; error: RowError } {
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    return { line, error: rowError('INVALID_REQUEST', `A record's data must be a JSON object, not ${kindOf(data)}.`) };
  }
  // Before anything recursive (serialising, the schema check) meets the row.
  const refusal = jsonRefusal(data, { name: 'data', envelope: 0, checkText: false });
  if (refusal) return { line, error: rowError('INVALID_REQUEST', refusal.message, { field: refusal.field, ...(refusal.limit === undefined ? {} : { limit: refusal.limit }) }) };
  const json = writeJson(data);
  if (json.length > maxRecordBytes || (json.length * 3 > maxRecordBytes && Buffer.byteLength(json) > maxRecordBytes)) {
    return { line, error: rowError('PAYLOAD_TOO_LARGE', `The record is larger than ${maxRecordBytes} bytes, the limit for one record.`, { limitBytes: maxRecordBytes }) };
  }
  const unstorable = unstorableReason(json);
  if (unstorable) return { line, error: rowError('INVALID_REQUEST', `The record ${unstorable}.`) };
  let schemaVersion: number | null;
  try {
    schemaVersion = check(data);
  } catch (error) {
    if (error instanceof AppError) return { line, error: rowError(error.code, error.message, error.details) };
    throw error;
  }
  return { json, schemaVersion };
}

const kindOf = (value: unknown): string =>
  value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value === 'string' ? 'a string' : `a ${typeof value}`;

// JSON.stringify writes NUL as \u0000 and a lone surrogate as \udXXX (a paired one stays raw).
// An escape counts only after an even run of backslashes: "\\u0000" is a backslash and text.
const UNSTORABLE_ESCAPE = /(?<!\\)(?:\\\\)*\\u(0000|d[89a-f][0-9a-f]{2})/;

/**
 * PostgreSQL's jsonb cannot hold NUL or a lone surrogate; both engines refuse them, so an import
 * behaves the same everywhere and such a row is reported instead of failing the batch.
 */
function unstorableReason(json: string): string | undefined {
  if (!json.includes('\\u')) return undefined;
  const match = UNSTORABLE_ESCAPE.exec(json);
  if (!match) return undefined;
  return match[1] === '0000' ? 'contains the NUL character (\\u0000), which cannot be stored' : 'contains a lone surrogate (an unpaired \\uD800-\\uDFFF), which is not Unicode';
}

/**
 * Collects accepted rows and writes them, with their events, a batch at a time through
 * Dialect.prepareRows (multi-row INSERTs on SQLite, COPY on PostgreSQL). One batch may be
 * written while the next is parsed, so on PostgreSQL parsing overlaps the database's work instead
 * of waiting for it. flush makes the pending rows ready to write (on PostgreSQL, COPY's text) while
 * the previous batch is still being written, then waits for that write and starts this one
 * without waiting (one connection runs one statement, and one COPY, at a time); settled waits for
 * the last.
 *
 * The values come straight from the record's shape (putNewRecordValues, in RECORD_COLUMNS'
 * order), and each record.created message is put together around the record's JSON text
 * (EventBatch), the text the record itself stores: the event carries the record exactly as it was
 * created, and the data is serialised once.
 */
function recordBatch(executor: Executor, collection: CollectionsTable, now: Date, importId: string) {
  let pending: AcceptedRow[] = [];
  let pendingChars = 0;
  let written = 0;
  let accepted = 0;
  let inFlight: Promise<void> = Promise.resolve();
  /** The first and the last id the import made, once it made one. */
  let firstId: string | null = null;
  let lastId: string | null = null;
  const dialect = dialectOf(executor);
  const at = now.toISOString();
  const time = now.getTime();
  const { workspace_id: workspaceId, id: collectionId } = collection;

  /** The records of `rows` and their events, ready to write, in that order. */
  function prepare(rows: AcceptedRow[]): PreparedRows[] {
    const values: unknown[] = new Array(rows.length * RECORD_COLUMNS.length);
    const events = new EventBatch(now, workspaceId, collectionId, 'record.created', importId);
    // One object for every row of the batch, filled in row by row: it is only read, never kept.
    const record: NewRecord = { id: '', workspaceId, collectionId, dataJson: '', schemaVersion: null, at };
    let v = 0;
    for (const row of rows) {
      // newId is monotonic: ids made in the same millisecond still sort in import order.
      record.id = newId('rec', time);
      firstId ??= record.id;
      lastId = record.id;
      record.dataJson = row.json;
      record.schemaVersion = row.schemaVersion;
      v = putNewRecordValues(values, v, record);
      // The record.created payload of docs/design.md §7, as createRecord's emitEvent writes it.
      events.add(newRecordEventJson(record));
    }
    return [dialect.prepareRows('records', RECORD_COLUMNS, values), events.prepareRows(dialect)];
  }

  async function write(after: Promise<void>, writes: PreparedRows[], rowCount: number): Promise<void> {
    await after;
    for (const rows of writes) await rows.write(executor);
    written += rowCount;
  }

  return {
    /** Adds a row; true when the batch is full and should be flushed. */
    add(row: AcceptedRow): boolean {
      accepted += 1;
      pending.push(row);
      pendingChars += row.json.length;
      return pending.length >= BATCH_ROWS || pendingChars >= BATCH_CHARS;
    },
    /** Prepares the pending rows, waits for the previous write, then starts writing them without waiting. */
    async flush(): Promise<void> {
      const previous = inFlight;
      if (pending.length > 0) {
        const rows = pending;
        pending = [];
        pendingChars = 0;
        inFlight = write(previous, prepare(rows), rows.length);
        // Marked as handled so a failure waits for the next flush or settled to surface, instead
        // of crashing the process as an unhandled rejection in between.
        inFlight.catch(() => undefined);
      }
      await previous;
    },
    settled: () => inFlight,
    written: () => written,
    idRange: () => (firstId === null || lastId === null ? null : { firstId, lastId }),
    /** Rows accepted so far, written or not. */
    count: () => accepted,
  };
}
