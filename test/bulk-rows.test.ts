import fc from 'fast-check';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Storage } from '../src/db/connect.js';
import { copyTextRows } from '../src/db/copy-text.js';
import { insertValues } from '../src/db/insert-rows.js';
import { describeEachEngine, freshStorage } from './support/harness.js';

/**
 * Dialect.prepareRows (COPY on PostgreSQL, multi-row INSERTs on SQLite) stores exactly what an
 * INSERT with bound parameters stores: text byte for byte whatever it holds (backslashes, tabs,
 * newlines, carriage returns, `\N`, `\.`, any Unicode), NULLs as NULL, integers, and JSON as the
 * engine's JSON column keeps it (jsonb on PostgreSQL).
 */
const RUNS = 60;
const SEED = 20261126;

/** Text made of what COPY's text format treats specially, mixed with any Unicode grapheme (no NUL: neither engine's text holds it). */
const unit = fc.oneof(
  fc.constantFrom('\\', '\t', '\n', '\r', '\r\n', '\\N', '\\.', '\\t', '"', "'", ',', '\u2028', '\u007f', '\u0001', '\u001b', '🚀', 'é', 'ß'),
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1 }).filter((grapheme) => !grapheme.includes('\u0000')),
);
const text = fc.string({ unit, maxLength: 40 });
const probeRow = fc.record({
  t: fc.option(text),
  n: fc.option(fc.integer()),
  j: fc.jsonValue({ maxDepth: 4, stringUnit: unit }).map((value) => JSON.stringify(value)),
});

describe('copyTextRows', () => {
  it('writes a line per row, tabs between values, \\N for NULL and escapes for the four specials', () => {
    expect(copyTextRows(['a\\b', 'tab\there', null, 'line\nbreak\r', 42, undefined, -7n, ''], 4)).toBe('a\\\\b\ttab\\there\t\\N\tline\\nbreak\\r\n42\t\\N\t-7\t\n');
  });

  it('refuses values that do not make whole rows, and values it has no text for', () => {
    expect(() => copyTextRows(['a', 'b', 'c'], 2)).toThrow(/whole rows/);
    expect(() => copyTextRows([Number.NaN], 1)).toThrow(/cannot write/);
    expect(() => copyTextRows([{ an: 'object' }], 1)).toThrow(/cannot write/);
  });
});

describeEachEngine('Dialect.prepareRows', (engine) => {
  let storage: Storage;
  beforeAll(async () => {
    storage = await freshStorage(engine);
    const json = engine === 'postgres' ? sql`jsonb` : sql`text`;
    for (const table of ['bulk_probe', 'insert_probe']) {
      await storage.db.schema.createTable(table).addColumn('ord', 'integer', (c) => c.primaryKey()).addColumn('t', 'text').addColumn('n', 'integer').addColumn('j', json, (c) => c.notNull()).execute();
    }
  });
  afterAll(async () => { await storage.close(); });

  const columns = ['ord', 't', 'n', 'j'] as const;
  const read = (table: string) => sql<{ ord: number; t: string | null; n: number | null; j: string }>`select ord, t, n, cast(j as text) as j from ${sql.table(table)} order by ord`.execute(storage.db);

  it('stores rows exactly as an INSERT of the same values does, inside the transaction', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(probeRow, { minLength: 1, maxLength: 30 }), async (rows) => {
        const values = rows.flatMap((row, ord) => [ord, row.t, row.n, row.j]);
        await storage.db.transaction().execute(async (trx) => {
          await storage.dialect.prepareRows('bulk_probe' as never, columns as never, values).write(trx);
          await insertValues(trx, 'insert_probe' as never, columns as never, values);
        });
        const [bulk, inserted] = [(await read('bulk_probe')).rows, (await read('insert_probe')).rows];
        expect(bulk).toEqual(inserted);
        expect(bulk.map(({ t, n }) => ({ t, n }))).toEqual(rows.map(({ t, n }) => ({ t, n })));
        await sql`delete from bulk_probe`.execute(storage.db);
        await sql`delete from insert_probe`.execute(storage.db);
      }),
      { numRuns: RUNS, seed: SEED },
    );
  });

  it('takes back its rows with the transaction', async () => {
    await expect(storage.db.transaction().execute(async (trx) => {
      await storage.dialect.prepareRows('bulk_probe' as never, columns as never, [1, 'kept?', 1, '{}', 2, 'no', null, '[]']).write(trx);
      throw new Error('the caller changed its mind');
    })).rejects.toThrow('changed its mind');
    expect((await read('bulk_probe')).rows).toEqual([]);
  });
});
