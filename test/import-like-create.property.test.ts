import fc from 'fast-check';
import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { signedInOwner, type Client } from './support/client.js';
import { describeEachEngine, startTestApp, type TestApp } from './support/harness.js';

/**
 * An imported record is stored byte for byte as the same data created on its own, and so is its
 * record.created event: on PostgreSQL the import writes with COPY and a create with a bound
 * parameter, so this holds COPY's text encoding to jsonb's reading of a parameter. Records are
 * generated with Unicode, backslashes, quotes, tabs and newlines in keys and strings, numbers of
 * every size, and nesting a few levels deep.
 */
const RUNS = 25;
const SEED = 20261126;

const unit = fc.oneof(
  fc.constantFrom('\\', '\t', '\n', '\r', '\\N', '\\.', '"', '/', '\u2028', '\u007f', '\u0001', '🚀', 'é'),
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1 }),
);
const number = fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.integer(), fc.constantFrom(Number.MAX_SAFE_INTEGER + 2, 1e21, 5e-324, -0));
const value = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, fc.constant(null), fc.boolean(), number, fc.string({ unit, maxLength: 30 }), tie('array'), tie('object')),
  array: fc.array(tie('value'), { maxLength: 4 }),
  object: fc.dictionary(fc.string({ unit, maxLength: 12 }), tie('value'), { maxKeys: 4 }),
})).value;
const record = fc.dictionary(fc.string({ unit, maxLength: 12 }), value, { maxKeys: 6 })
  // What both routes refuse alike (accepted-json.ts) is for other tests: these are all stored.
  .filter((data) => !/"(__proto__|constructor)"|\\u0000/.test(JSON.stringify(data)));

describeEachEngine('an imported record is stored as a created one', (engine) => {
  let t: TestApp;
  let owner: Client;
  beforeAll(async () => {
    t = await startTestApp(engine);
    owner = await signedInOwner(t);
  });
  afterAll(async () => { await t.close(); });

  /** A collection's records as stored (JSON as the engine's own text), each with its event's data, oldest first. */
  async function stored(collectionId: string) {
    const records = await sql<{ id: string; data: string }>`select id, cast(data as text) as data from records where collection_id = ${collectionId} order by id`.execute(t.deps.db);
    const events = await t.deps.db.selectFrom('events').select('data').where('collection_id', '=', collectionId).where('type', '=', 'record.created').execute();
    const eventOf = new Map(events.map((event) => [JSON.parse(event.data).record.id as string, event.data]));
    return records.rows.map((row) => ({ ...row, event: eventOf.get(row.id) }));
  }

  it('byte for byte, with its record.created event', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(record, { minLength: 1, maxLength: 6 }), async (records) => {
        run += 1;
        const created = await owner.post('/v1/collections', { name: `run_${run}` });
        expect(created.status).toBe(201);
        for (const data of records) expect((await owner.post(`/v1/collections/run_${run}/records`, { data })).status).toBe(201);
        const body = records.map((data) => JSON.stringify(data)).join('\n') + '\n';
        const imported = await owner.call('POST', `/v1/collections/run_${run}/import`, body, { 'content-type': 'application/x-ndjson' });
        expect(imported.body).toEqual({ imported: records.length, rejected: [], rejectedCount: 0 });

        const rows = await stored(created.body.id);
        expect(rows).toHaveLength(2 * records.length);
        const [byCreate, byImport] = [rows.slice(0, records.length), rows.slice(records.length)];
        byImport.forEach((row, i) => {
          const twin = byCreate[i]!;
          expect(row.data).toBe(twin.data);
          expect(row.event).toBe(twin.event!.replace(twin.id, row.id));
          expect(JSON.parse(row.data)).toEqual(JSON.parse(JSON.stringify(records[i])));
        });
      }),
      { numRuns: RUNS, seed: SEED },
    );
  }, 120_000);
});
