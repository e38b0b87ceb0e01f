import { CompiledQuery, sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Storage } from '../src/db/connect.js';
import { writeJson } from '../src/db/dialect.js';
import { migrateToLatest } from '../src/db/migrate.js';
import type { Db, RecordsTable } from '../src/db/schema.js';
import { newId } from '../src/ids.js';
import { createIndex } from '../src/modules/indexes/indexes.js';
import { parseFilter } from '../src/modules/records/query/filter-parser.js';
import { buildListRecordsQuery } from '../src/modules/records/query/list.js';
import { DEFAULT_SORT } from '../src/modules/records/query/sort-parser.js';
import { describeEachEngine, freshStorage } from './support/harness.js';

const NOW = new Date('2026-01-01T00:00:00.000Z').toISOString();

/**
 * The first page of a list must read a collection's records in id order and stop, on a table
 * that has just grown from empty with no ANALYZE, and for a new collection growing fast inside a
 * large table whose statistics say it is rare. A planner misled by statistics reads the whole
 * collection and sorts it (on PostgreSQL: a bitmap scan and a top-N sort, 50-80 ms a page at
 * 9,000 records). The statement checked is the one list.ts runs, as a custom plan and as the
 * generic plan PostgreSQL switches a prepared statement to after five runs.
 */
describeEachEngine('list plans without fresh statistics', (engine) => {
  let storage: Storage;
  let db: Db;
  const workspaceId = newId('ws');

  beforeAll(async () => {
    storage = await freshStorage(engine);
    db = storage.db;
    await migrateToLatest(db);
    await db.insertInto('workspaces').values({ id: workspaceId, name: 'w', created_at: NOW }).execute();
    // No ANALYZE from autovacuum either, whenever it would have come: statistics stay as they are.
    if (engine === 'postgres') await sql`alter table records set (autovacuum_enabled = off)`.execute(db);
  });
  afterAll(async () => {
    await storage?.close();
  });

  async function addCollection(): Promise<string> {
    const id = newId('col');
    await db.insertInto('collections').values({ id, workspace_id: workspaceId, name: id, public: 0, settings: '{}', active_schema_version: null, created_at: NOW, updated_at: NOW, trashed_at: null }).execute();
    return id;
  }

  async function grow(collectionId: string, count: number): Promise<void> {
    for (let done = 0; done < count; done += 1000) {
      const rows: RecordsTable[] = Array.from({ length: Math.min(1000, count - done) }, (_, i) => ({
        id: newId('rec'),
        workspace_id: workspaceId,
        collection_id: collectionId,
        data: writeJson({ n: done + i, tag: (done + i) % 7 === 0 ? 'a' : 'b' }),
        schema_version: null,
        revision: 1,
        created_at: NOW,
        updated_at: NOW,
        // Every tenth trashed: the list must pass over them without a sort either.
        trashed_at: (done + i) % 10 === 0 ? NOW : null,
      }));
      await db.insertInto('records').values(rows).execute();
    }
  }

  const listQuery = (collectionId: string, filter?: string) =>
    buildListRecordsQuery({ executor: db, dialect: storage.dialect, workspaceId, collectionId, trashed: false, sort: DEFAULT_SORT, limit: 50, filter: filter ? parseFilter(filter) : undefined }).compile();

  /** The plans of the statement: SQLite's, or PostgreSQL's custom plan and generic plan. */
  async function plansOf(query: CompiledQuery): Promise<string[]> {
    if (engine === 'sqlite') {
      const { rows } = await db.executeQuery<{ detail: string }>(CompiledQuery.raw(`explain query plan ${query.sql}`, [...query.parameters]));
      return [rows.map((row) => row.detail).join('\n')];
    }
    const custom = await db.executeQuery<{ 'QUERY PLAN': string }>(CompiledQuery.raw(`explain ${query.sql}`, [...query.parameters]));
    // One connection for PREPARE, the setting and EXECUTE: a transaction holds it.
    const generic = await db.transaction().execute(async (trx) => {
      await sql`set local plan_cache_mode = force_generic_plan`.execute(trx);
      await sql.raw(`prepare list_plan as ${query.sql}`).execute(trx);
      const values = query.parameters.map((value) => (typeof value === 'string' ? `'${value.replaceAll("'", "''")}'` : String(value))).join(', ');
      const { rows } = await trx.executeQuery<{ 'QUERY PLAN': string }>(CompiledQuery.raw(`explain execute list_plan(${values})`));
      await sql`deallocate list_plan`.execute(trx);
      return rows;
    });
    return [custom.rows, generic].map((rows) => rows.map((row) => row['QUERY PLAN']).join('\n'));
  }

  /** Each plan reads in id order from an index and never sorts. */
  async function expectOrderedReads(collectionId: string): Promise<void> {
    for (const filter of [undefined, 'data.tag = "a"']) {
      for (const plan of await plansOf(listQuery(collectionId, filter))) {
        if (engine === 'sqlite') {
          expect(plan, plan).toMatch(/USING INDEX records_collection/);
          expect(plan, plan).not.toMatch(/TEMP B-TREE/);
        } else {
          expect(plan, plan).toMatch(/Index Scan using records_live/);
          expect(plan, plan).not.toMatch(/Sort|Bitmap/);
        }
      }
    }
  }

  it('a table that has just grown from empty, at every size on the way', async () => {
    const collectionId = await addCollection();
    await expectOrderedReads(collectionId);
    for (const size of [1_000, 10_000, 40_000]) {
      await grow(collectionId, size - (size === 1_000 ? 0 : size === 10_000 ? 1_000 : 10_000));
      await expectOrderedReads(collectionId);
    }
  });

  it('a filter on an indexed field reads that index, as the collection grows from empty', async () => {
    const collectionId = await addCollection();
    await createIndex(db, storage.dialect, { workspaceId, collectionId, name: 'by_tag', fields: ['data.tag'], unique: false, now: new Date(NOW) });
    for (const size of [1_000, 20_000]) {
      await grow(collectionId, size === 1_000 ? 1_000 : 19_000);
      for (const plan of await plansOf(listQuery(collectionId, 'data.tag = "a"'))) {
        // The record index holds the field and then the id: its matches come in id order.
        expect(plan, plan).toMatch(engine === 'sqlite' ? /SEARCH records USING INDEX rix_/ : /Index Scan using rix_/);
        expect(plan, plan).not.toMatch(/TEMP B-TREE|Sort|Bitmap/);
      }
    }
  });

  it('a new collection growing fast in a large table whose statistics do not know it', async () => {
    await sql`analyze records`.execute(db);
    const collectionId = await addCollection();
    await grow(collectionId, 9_000);
    await expectOrderedReads(collectionId);
  });
});
