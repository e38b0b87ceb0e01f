/**
 * Benchmark of full-text search (`npm run bench:search`): `?search=` over one collection of
 * BENCH_RECORDS records (1,000,000 by default) on each engine, against a baseline in the same run,
 * the first page of the unfiltered list. A report, never a test: it prints figures and exits 0; it
 * exits 1 only when it could not run at all.
 *
 * The list function the route calls (modules/records/list-records.ts) is called in-process, so
 * the figures are the database's and the query's, without HTTP. Records are loaded by one INSERT …
 * SELECT per 100,000 (the search triggers index them as they go: the load time includes that).
 * Each record: title "t<i % 100000> w<a> w<b>", body "w<c> w<d> c<i % 10> lorem": a word of
 * the w-vocabulary (1,000 words) is in about 0.4 % of the records, a c-word in 10 %, lorem in all.
 *
 * Env: BENCH_RECORDS (1000000), BENCH_ROUNDS (30 per query), BENCH_ENGINES (sqlite,postgres),
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
import { buildWaitingSearchIndexes } from '../src/modules/search/search-builds.js';
import { listRecords } from '../src/modules/records/list-records.js';
import { benchPostgresUrl, createDatabase, postgresVersion } from './support/databases.js';
import { cleanUpOnSignals, cleanupAll, makeTempDir } from './support/processes.js';
import { benchEngines, wholeNumber } from './support/settings.js';
import { fixed, formatTable, thousands } from './support/table.js';

const settings = {
  records: wholeNumber('BENCH_RECORDS', 1_000_000, 1000),
  rounds: wholeNumber('BENCH_ROUNDS', 30, 3),
  engines: benchEngines(),
  pgUrl: benchPostgresUrl(),
};
const log = (line: string) => process.stdout.write(`${line}\n`);
const WORKSPACE = newId('ws', Date.now());
const COLLECTION = newId('col', Date.now());

const QUERIES: { name: string; query: { search?: string; sort?: string; filter?: string } }[] = [
  { name: 'baseline: first page, no search', query: {} },
  { name: 'rare word (10 records), ranked', query: { search: 't4242' } },
  { name: 'common word (~0.4 %), ranked', query: { search: 'w17' } },
  { name: 'two common words, ranked', query: { search: 'w17 w3' } },
  { name: 'phrase of two words', query: { search: '"w17 c3"' } },
  { name: 'prefix t4242*', query: { search: 't4242*' } },
  { name: 'common word, sort=-createdAt', query: { search: 'w17', sort: '-createdAt' } },
  { name: 'c-word (10 %), ranked', query: { search: 'c7' } },
  { name: 'common word + filter', query: { search: 'w17', filter: 'data.n >= 500000' } },
];

async function load(storage: Storage): Promise<void> {
  const now = new Date().toISOString();
  await storage.db.insertInto('workspaces').values({ id: WORKSPACE, name: 'bench', created_at: now }).execute();
  await storage.db
    .insertInto('collections')
    .values({ id: COLLECTION, workspace_id: WORKSPACE, name: 'notes', public: 0, settings: JSON.stringify({ description: '', searchFields: ['data.title', 'data.body'] }), active_schema_version: null, search_build: null, created_at: now, updated_at: now, trashed_at: null })
    .execute();
  const postgres = storage.dialect.engine === 'postgres';
  // On PostgreSQL the records go in without the trigger, and the index is then built as a
  // collection's searchFields change builds it (search-builds.ts): measured apart.
  if (postgres) await sql`alter table records disable trigger records_search`.execute(storage.db);
  const step = 100_000;
  for (let from = 0; from < settings.records; from += step) {
    const to = Math.min(settings.records, from + step) - 1;
    const pad = (expr: string) => (storage.dialect.engine === 'sqlite' ? `printf('%012d', ${expr})` : `lpad((${expr})::text, 12, '0')`);
    const data = storage.dialect.engine === 'sqlite'
      ? `json_object('n', i, 'title', 't' || (i % 100000) || ' w' || (i * 7 % 1000) || ' w' || (i * 13 % 997), 'body', 'w' || (i * 31 % 991) || ' w' || (i * 37 % 983) || ' c' || (i % 10) || ' lorem')`
      : `jsonb_build_object('n', i, 'title', 't' || (i % 100000) || ' w' || (i * 7 % 1000) || ' w' || (i * 13 % 997), 'body', 'w' || (i * 31 % 991) || ' w' || (i * 37 % 983) || ' c' || (i % 10) || ' lorem')`;
    const series = storage.dialect.engine === 'sqlite'
      ? `with recursive s(i) as (select ${from} union all select i + 1 from s where i < ${to}) select`
      : `select`;
    const source = storage.dialect.engine === 'sqlite' ? 'from s' : `from generate_series(${from}, ${to}) as i`;
    await sql.raw(`insert into records (id, workspace_id, collection_id, data, schema_version, revision, created_at, updated_at, trashed_at)
      ${series} 'rec_' || ${pad('i')}, '${WORKSPACE}', '${COLLECTION}', ${data}, null, 1, '${now}', '${now}', null ${source}`).execute(storage.db);
  }
  if (postgres) {
    await sql`alter table records enable trigger records_search`.execute(storage.db);
    await storage.db.updateTable('collections').set({ search_build: JSON.stringify({ indexed: 0, total: settings.records, after: null }) }).execute();
  }
  // The planner's statistics, as a database that has been running a while has them.
  await sql.raw(storage.dialect.engine === 'sqlite' ? 'analyze' : 'analyze records; analyze record_search').execute(storage.db);
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]!;

async function runEngine(engine: 'sqlite' | 'postgres'): Promise<string[][]> {
  const dataDir = makeTempDir('plainbase-bench-search-');
  const url = engine === 'sqlite' ? `sqlite:${path.join(dataDir, 'plainbase.db')}` : await createDatabase(settings.pgUrl, 'search');
  const config = loadConfig({ PLAINBASE_LOG_LEVEL: 'silent', PLAINBASE_DATA_DIR: dataDir, PLAINBASE_DATABASE_URL: url, PLAINBASE_QUERY_TIME_MS: '60000' });
  const storage = await connectStorage(config.database);
  try {
    await migrateToLatest(storage.db);
    const started = performance.now();
    await load(storage);
    const loadSeconds = (performance.now() - started) / 1000;
    log(`${engine}: ${thousands(settings.records)} records loaded${engine === 'sqlite' ? ' and indexed by the triggers' : ''} in ${fixed(loadSeconds, 1)} s (${thousands(settings.records / loadSeconds)} records/s)`);
    const deps = buildDeps(config, storage, systemClock);
    if (engine === 'postgres') {
      const builtFrom = performance.now();
      await buildWaitingSearchIndexes(deps);
      const buildSeconds = (performance.now() - builtFrom) / 1000;
      log(`${engine}: search index built in the background way in ${fixed(buildSeconds, 1)} s (${thousands(settings.records / buildSeconds)} records/s)`);
      await sql`analyze record_search`.execute(storage.db);
    }
    if (process.env.BENCH_EXPLAIN && engine === 'postgres') {
      const plan = await sql.raw(`explain analyze select records.id, ts_rank(record_search.tsv, to_tsquery('simple', '(''t4242'')'), 1) as s from records join record_search on record_search.record_id = records.id where records.workspace_id = '${WORKSPACE}' and records.collection_id = '${COLLECTION}' and trashed_at is null and record_search.tsv @@ to_tsquery('simple', '(''t4242'')') order by s desc, records.id limit 51`).execute(storage.db);
      if (engine === 'postgres') log((plan.rows as { 'QUERY PLAN': string }[]).map((row) => row['QUERY PLAN']).join('\n'));
    }
    const rows: string[][] = [];
    let baseline = NaN;
    for (const { name, query } of QUERIES) {
      const times: number[] = [];
      let found = 0;
      for (let round = 0; round < settings.rounds + 2; round++) {
        const t0 = performance.now();
        const page = await listRecords(deps, WORKSPACE, COLLECTION, { ...query, limit: 50 });
        const ms = performance.now() - t0;
        found = page.data.length;
        if (round >= 2) times.push(ms);
      }
      times.sort((a, b) => a - b);
      const p50 = percentile(times, 50);
      if (Number.isNaN(baseline)) baseline = p50;
      rows.push([engine, name, String(found), fixed(p50, 2), fixed(percentile(times, 99), 2), fixed(p50 / baseline, 1)]);
    }
    await closeServices(deps);
    return rows;
  } finally {
    await storage.close();
  }
}

async function main(): Promise<void> {
  cleanUpOnSignals();
  if (settings.engines.includes('postgres')) {
    const version = await postgresVersion(settings.pgUrl);
    if (version instanceof Error) throw new Error(`PostgreSQL at ${settings.pgUrl} is not reachable: ${version.message}`);
  }
  log(`bench:search — ${os.cpus().length} cores, Node ${process.version}, ${thousands(settings.records)} records, ${settings.rounds} rounds per query, page of 50`);
  const rows: string[][] = [];
  for (const engine of settings.engines) rows.push(...(await runEngine(engine)));
  log(formatTable(['engine', 'query', 'records on page', 'p50 ms', 'p99 ms', 'p50 / baseline'], rows));
}

main()
  .then(() => cleanupAll())
  .catch(async (error: unknown) => {
    process.stderr.write(`bench:search could not run: ${error instanceof Error ? error.stack : String(error)}\n`);
    await cleanupAll();
    process.exit(1);
  });
