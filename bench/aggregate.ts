/**
 * Aggregates over a large collection (`npm run bench:aggregate`). A report, never a test: it
 * prints figures and exits 0; it exits 1 only when it could not run at all.
 *
 * For each engine, a fresh database gets BENCH_RECORDS records (1,000,000 by default) in one
 * collection, written in bulk the way an import writes them (Dialect.prepareRows: multi-row
 * INSERTs on SQLite, COPY on PostgreSQL), with a `plan` of five values, an `amount` and creation
 * times spread over 90 days. Then, in-process (no HTTP: the figure is the statement's), the
 * aggregate service against the plain SQL a person would write for the same answer, run directly:
 *   - count by data.plan;
 *   - count by createdAt:day, in UTC and in Europe/Berlin;
 * each without and then with an index on data.plan (src/modules/indexes, as POST …/indexes makes
 * it). Each figure is the best of BENCH_REPEATS runs; ratio = aggregate / direct SQL. The
 * aggregate's statement also carries what the service adds: the type-strict sort key per group,
 * the window totals of `skipped`, the budget check (SQLite) and statement_timeout (PostgreSQL).
 *
 * Env: BENCH_RECORDS (1000000), BENCH_REPEATS (3), BENCH_ENGINES (sqlite,postgres),
 * BENCH_PG_URL (postgres://postgres@127.0.0.1:5432).
 */
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { buildDeps, closeServices } from '../src/build-services.js';
import { systemClock } from '../src/clock.js';
import { loadConfig } from '../src/config.js';
import { connectStorage, type Storage } from '../src/db/connect.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { newId } from '../src/ids.js';
import { createIndex } from '../src/modules/indexes/indexes.js';
import { aggregateRecords } from '../src/modules/records/aggregate-records.js';
import { benchPostgresUrl, createDatabase } from './support/databases.js';
import { cleanUpOnSignals, cleanupAll, makeTempDir } from './support/processes.js';
import { benchEngines, wholeNumber } from './support/settings.js';
import { fixed, formatTable, thousands } from './support/table.js';

const settings = {
  records: wholeNumber('BENCH_RECORDS', 1_000_000, 1),
  repeats: wholeNumber('BENCH_REPEATS', 3, 1),
  engines: benchEngines(),
  pgUrl: benchPostgresUrl(),
};
const log = (line: string) => process.stdout.write(`${line}\n`);

const PLANS = ['free', 'pro', 'team', 'enterprise', 'trial'];
const START = Date.parse('2026-08-01T00:00:00.000Z');
const SPAN_MS = 90 * 86_400_000;
const BATCH = 10_000;

async function load(storage: Storage, workspaceId: string, collectionId: string): Promise<number> {
  const now = new Date(START).toISOString();
  await storage.db.insertInto('workspaces').values({ id: workspaceId, name: 'bench', created_at: now }).execute();
  await storage.db.insertInto('collections')
    .values({ id: collectionId, workspace_id: workspaceId, name: 'orders', public: 0, settings: '{}', active_schema_version: null, created_at: now, updated_at: now, trashed_at: null })
    .execute();
  const columns = ['id', 'workspace_id', 'collection_id', 'data', 'schema_version', 'revision', 'created_at', 'updated_at', 'trashed_at'] as const;
  const started = performance.now();
  for (let from = 0; from < settings.records; from += BATCH) {
    const values: unknown[] = [];
    for (let i = from; i < Math.min(settings.records, from + BATCH); i += 1) {
      const at = START + Math.floor((i / settings.records) * SPAN_MS);
      const time = new Date(at).toISOString();
      values.push(newId('rec', at), workspaceId, collectionId, JSON.stringify({ plan: PLANS[i % PLANS.length], amount: i % 1000, note: `order ${i}` }), null, 1, time, time, null);
    }
    const rows = storage.dialect.prepareRows('records', columns, values);
    await storage.db.transaction().execute((trx) => rows.write(trx));
  }
  return (performance.now() - started) / 1000;
}

async function best(run: () => Promise<unknown>): Promise<number> {
  let fastest = Infinity;
  for (let i = 0; i < settings.repeats; i += 1) {
    const started = performance.now();
    await run();
    fastest = Math.min(fastest, performance.now() - started);
  }
  return fastest;
}

/** The plain SQL for each measure, as a person would write it for the same groups. */
function directSql(engine: 'sqlite' | 'postgres', measure: 'plan' | 'utc day' | 'berlin day') {
  if (engine === 'sqlite') {
    if (measure === 'plan') return sql`select json_extract(data, '$.plan') as plan, count(*) as c from records where workspace_id = ${'W'} and collection_id = ${'C'} and trashed_at is null group by 1 order by 1`;
    // SQLite has no time zones: the direct SQL can bucket only by UTC day (substr of the ISO text).
    return sql`select substr(created_at, 1, 10) as day, count(*) as c from records where workspace_id = ${'W'} and collection_id = ${'C'} and trashed_at is null group by 1 order by 1`;
  }
  if (measure === 'plan') return sql`select data->>'plan' as plan, count(*) as c from records where workspace_id = ${'W'} and collection_id = ${'C'} and trashed_at is null group by 1 order by 1`;
  const zone = measure === 'utc day' ? 'UTC' : 'Europe/Berlin';
  return sql`select to_char(cast(created_at as timestamptz) at time zone ${zone}, 'YYYY-MM-DD') as day, count(*) as c from records where workspace_id = ${'W'} and collection_id = ${'C'} and trashed_at is null group by 1 order by 1`;
}

async function benchEngine(engine: 'sqlite' | 'postgres'): Promise<string[][]> {
  const dataDir = makeTempDir('plainbase-bench-aggregate-');
  const database = engine === 'sqlite'
    ? { engine, file: path.join(dataDir, 'plainbase.db') } as const
    : { engine, url: await createDatabase(settings.pgUrl, 'aggregate') } as const;
  const storage = await connectStorage(database, engine === 'postgres' ? { poolSize: 4 } : {});
  await migrateToLatest(storage.db);
  const config = { ...loadConfig({ PLAINBASE_LOG_LEVEL: 'silent', PLAINBASE_DATA_DIR: dataDir, PLAINBASE_QUERY_TIME_MS: '600000' }), database };
  const deps = buildDeps(config, storage, systemClock);
  const workspaceId = newId('ws');
  const collectionId = newId('col');
  const loadSeconds = await load(storage, workspaceId, collectionId);
  log(`· ${engine}: ${thousands(settings.records)} records loaded in ${fixed(loadSeconds, 1)} s (${thousands(Math.round(settings.records / loadSeconds))}/s)`);
  if (storage.dialect.refreshStatistics) await sql`analyze records`.execute(storage.db);

  const measures = [
    { name: 'plan', query: { groupBy: 'data.plan' } },
    { name: 'utc day', query: { groupBy: 'createdAt:day' } },
    { name: 'berlin day', query: { groupBy: 'createdAt:day', tz: 'Europe/Berlin' } },
  ] as const;
  const rows: string[][] = [];
  for (const indexed of [false, true]) {
    if (indexed) {
      const started = performance.now();
      await createIndex(storage.db, storage.dialect, { workspaceId, collectionId, name: 'by_plan', fields: ['data.plan'], unique: false, now: new Date() });
      if (storage.dialect.refreshStatistics) await sql`analyze records`.execute(storage.db);
      log(`· ${engine}: index on data.plan built in ${fixed((performance.now() - started) / 1000, 1)} s`);
    }
    for (const measure of measures) {
      let groups = 0;
      const ours = await best(async () => {
        const page = await aggregateRecords(deps, workspaceId, collectionId, { ...measure.query, limit: 1000 });
        groups = page.data.length;
      });
      const compiled = directSql(engine, measure.name).compile(storage.db);
      const parameters = compiled.parameters.map((value) => (value === 'W' ? workspaceId : value === 'C' ? collectionId : value));
      const direct = await best(() => storage.db.executeQuery({ ...compiled, parameters }));
      rows.push([engine, measure.name, indexed ? 'yes' : 'no', thousands(groups), fixed(ours, 0), fixed(direct, 0), fixed(ours / direct, 2)]);
      log(`· ${engine}: ${measure.name}, index ${indexed ? 'yes' : 'no'}: aggregate ${fixed(ours, 0)} ms, direct SQL ${fixed(direct, 0)} ms`);
    }
  }
  await closeServices(deps);
  await storage.close();
  return rows;
}

async function main(): Promise<void> {
  cleanUpOnSignals();
  log(`Aggregates over ${thousands(settings.records)} records, best of ${settings.repeats}; ${os.cpus().length} cores, load ${os.loadavg()[0]!.toFixed(1)}`);
  const rows: string[][] = [];
  for (const engine of settings.engines) rows.push(...(await benchEngine(engine)));
  log('');
  log(formatTable(['engine', 'group by', 'index', 'groups', 'aggregate ms', 'direct SQL ms', 'ratio'], rows));
  log('');
  log('direct SQL: the same grouping, hand-written (SQLite buckets days only in UTC: it has no time zones).');
}

main()
  .then(() => cleanupAll())
  .catch(async (error) => {
    process.stderr.write(`bench:aggregate could not run: ${(error as Error).stack ?? error}\n`);
    await cleanupAll();
    process.exit(1);
  });
