import Database from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { describe, expect, it } from 'vitest';
import { sqliteDialect } from '../src/db/sqlite-dialect.js';
import { rowLimit } from '../src/db/row-limit.js';
import type { Database as Schema } from '../src/db/schema.js';
import { buildListRecordsQuery } from '../src/modules/records/query/list.js';
import { parseFilter } from '../src/modules/records/query/filter-parser.js';
import { parseSort } from '../src/modules/records/query/sort-parser.js';

describe('rowLimit', () => {
  const db = new Kysely<Schema>({ dialect: new SqliteDialect({ database: new Database(':memory:') }) });

  it('writes the limit into the SQL text, not as a bound parameter', () => {
    const { sql, parameters } = db.selectFrom('records').select('id').where('collection_id', '=', 'col_1').limit(rowLimit(20)).compile();
    expect(sql).toMatch(/ limit 20$/);
    expect(parameters).toEqual(['col_1']);
  });

  it('refuses anything but a whole number of rows', () => {
    for (const bad of [1.5, -1, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 60]) expect(() => rowLimit(bad)).toThrow(/not a number of rows/);
  });

  it('a list query binds its values and writes limit + 1 into its text', () => {
    const query = buildListRecordsQuery({
      executor: db, dialect: sqliteDialect, workspaceId: 'ws_1', collectionId: 'col_1', trashed: false,
      filter: parseFilter('data.status = "s42"'), sort: parseSort(undefined), limit: 50,
    }).compile();
    expect(query.sql).toMatch(/ limit 51$/);
    expect(query.parameters).not.toContain(51);
    expect(query.parameters.slice(0, 2)).toEqual(['ws_1', 'col_1']);
  });
});
