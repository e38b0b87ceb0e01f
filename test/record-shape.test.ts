import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Dialect } from '../src/db/dialect.js';
import { postgresDialect } from '../src/db/postgres-dialect.js';
import { sqliteDialect } from '../src/db/sqlite-dialect.js';

const dialectFor = (engine: 'sqlite' | 'postgres'): Dialect => (engine === 'sqlite' ? sqliteDialect : postgresDialect('postgres://unused'));
import { migrateToLatest } from '../src/db/migrate.js';
import { RecordBody, RecordSummaryBody } from '../src/http/routes/records/record-schemas.js';
import {
  exportLineJson,
  newRecordEventJson,
  newRecordRow,
  RECORD_BODY,
  RECORD_COLUMNS,
  RECORD_EXPORT_LINE,
  RECORD_SUMMARY,
  recordEventData,
  recordJson,
  toRecordRead,
  toRecordView,
  type NewRecord,
  type RecordsTable,
} from '../src/modules/records/record-shape.js';
import { describeEachEngine, freshStorage } from './support/harness.js';

/**
 * The record's shape (src/modules/records/record-shape.ts) is one definition from which generated
 * writers make answers, export lines and event messages without JSON.stringify: each must write
 * exactly what JSON.stringify of the same object gives, and the definition must match the table.
 */

const id = (prefix: string) => fc.stringMatching(/^[0-9a-z]{26}$/).map((ulid) => `${prefix}_${ulid}`);
const time = fc.date({ min: new Date('2000-01-01T00:00:00.000Z'), max: new Date('2099-12-31T23:59:59.999Z'), noInvalidDate: true }).map((date) => date.toISOString());
const data = fc.dictionary(fc.string(), fc.jsonValue()).map((value) => JSON.parse(JSON.stringify(value)) as Record<string, unknown>);

const row = fc.record({
  id: id('rec'),
  workspace_id: id('ws'),
  collection_id: id('col'),
  data,
  schema_version: fc.option(fc.integer({ min: 1, max: 1_000_000 }), { nil: null }),
  revision: fc.integer({ min: 1, max: 2 ** 31 }),
  created_at: time,
  updated_at: time,
  trashed_at: fc.option(time, { nil: null }),
});
const files = fc.array(id('fil'), { maxLength: 4 });

describe('record shape', () => {
  for (const engine of ['sqlite', 'postgres'] as const) {
    const dialect = dialectFor(engine);
    // What each engine's driver gives for the data column: its JSON text (on PostgreSQL jsonb's own
    // text, with spaces, which the writer passes through as it is: compact text stands for it here).
    const stored = (value: { data: Record<string, unknown> }) => JSON.stringify(value.data);

    it(`writes a read record as JSON.stringify writes its view, in RecordBody's order (${engine})`, () => {
      fc.assert(
        fc.property(row, files, (value, fileIds) => {
          const tableRow: RecordsTable = { ...value, data: stored(value) };
          const read = toRecordRead(dialect, tableRow, { collectionId: value.collection_id });
          read.files = fileIds;
          const view = toRecordView(dialect, tableRow);
          view.files = fileIds;
          expect(Object.keys(view)).toEqual([...RECORD_BODY]);
          expect(recordJson(read)).toBe(JSON.stringify(view));
        }),
      );
    });

    it(`writes an export line as JSON.stringify of its fields (${engine})`, () => {
      fc.assert(
        fc.property(row, (value) => {
          const line = { id: value.id, data: value.data, createdAt: value.created_at, updatedAt: value.updated_at, schemaVersion: value.schema_version };
          expect(Object.keys(line)).toEqual([...RECORD_EXPORT_LINE]);
          expect(exportLineJson(dialect, { ...value, data: stored(value) })).toBe(JSON.stringify(line));
        }),
      );
    });
  }

  it('writes a new record\'s event as JSON.stringify of the event data of its view', () => {
    fc.assert(
      fc.property(row, (value) => {
        const record: NewRecord = {
          id: value.id,
          workspaceId: value.workspace_id,
          collectionId: value.collection_id,
          dataJson: JSON.stringify(value.data),
          schemaVersion: value.schema_version,
          at: value.created_at,
        };
        const view = toRecordView(dialectFor('sqlite'), newRecordRow(record));
        expect(newRecordEventJson(record)).toBe(JSON.stringify(recordEventData(view)));
        expect(JSON.parse(newRecordEventJson(record))).toEqual({ record: { id: value.id, data: value.data } });
      }),
    );
  });

  it('fills a new record\'s row: revision 1, created and updated at once, not in the trash', () => {
    const row = newRecordRow({ id: 'rec_1', workspaceId: 'ws_1', collectionId: 'col_1', dataJson: '{}', schemaVersion: null, at: '2026-01-01T00:00:00.000Z' });
    expect(row).toEqual({
      id: 'rec_1', workspace_id: 'ws_1', collection_id: 'col_1', data: '{}', schema_version: null, revision: 1,
      created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z', trashed_at: null,
    });
    expect(Object.keys(row)).toEqual([...RECORD_COLUMNS]);
  });

  it('documents the answers with the views\' fields in their order', () => {
    expect(Object.keys(RecordBody.properties)).toEqual([...RECORD_BODY]);
    expect(Object.keys(RecordSummaryBody.properties)).toEqual([...RECORD_SUMMARY]);
  });
});

describeEachEngine('record shape and the records table', (engine) => {
  it('names exactly the columns the migrations make', async () => {
    const storage = await freshStorage(engine);
    try {
      await migrateToLatest(storage.db);
      const tables = await storage.db.introspection.getTables();
      const records = tables.find((table) => table.name === 'records' && (storage.schema === undefined || table.schema === storage.schema));
      expect(records?.columns.map((column) => column.name).sort()).toEqual([...RECORD_COLUMNS].sort());
    } finally {
      await storage.close();
    }
  });
});
