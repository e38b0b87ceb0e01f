/**
 * Changes by filter (`npm run bench:bulk`): how long a bulk-update and a bulk-delete of
 * BENCH_RECORDS records take, against a baseline measured in the same run on the same rows: one
 * plain SQL UPDATE of those rows, sent to the database directly (no versions, no events, no
 * schema check). A report, never a test: exits 0 whatever the figures, 1 only when it could not run.
 *
 * For each engine: start Plainbase (`node bin/plainbase.js serve`, webhook worker off, so that the
 * fan-out of the events does not share the measured time) in a fresh data dir or a fresh
 * PostgreSQL database, create the collection `bench` with an index on data.status, import the
 * records, and then at once (the tables just grew: nothing has run ANALYZE) measure
 *   1. baseline: UPDATE records SET data = data with one field set, revision + 1 (every record);
 *   2. POST …/records/bulk-update {filter: "data.n >= 0", patch: {tier: "silver", status: null}}
 *      (every record: a version and a record.updated event each);
 *   3. baseline: UPDATE records SET trashed_at, revision + 1 (then, not timed, back out of the trash);
 *   4. POST …/records/bulk-delete {filter: "data.n >= 0"} (every record to the trash).
 * Target: each bulk change within 30 s.
 *
 * Env: BENCH_RECORDS (100000), BENCH_ENGINES ("sqlite,postgres"), BENCH_PG_URL.
 */
import path from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { benchPostgresUrl, createDatabase } from './support/databases.js';
import { callJson, expectStatus, streamUpload } from './support/http.js';
import { loadAverage, readCpuSeconds } from './support/memory.js';
import { OWNER_ENV, signInOwner } from './support/owner.js';
import { cleanUpOnSignals, cleanupAll, freePort, makeTempDir, startServer } from './support/processes.js';
import { ndjsonChunks } from './support/records.js';
import { benchEngines, wholeNumber } from './support/settings.js';
import { fixed, thousands } from './support/table.js';

type Engine = 'sqlite' | 'postgres';
const TARGET_SECONDS = 30;

const settings = {
  records: wholeNumber('BENCH_RECORDS', 100_000, 100),
  engines: benchEngines(),
  pgUrl: benchPostgresUrl(),
};

/** The database as the baseline reaches it: straight, beside the server. */
interface Direct {
  run(text: { sqlite: string; postgres: string }, values: unknown[]): Promise<number>;
  close(): Promise<void>;
}

async function directTo(engine: Engine, target: string): Promise<Direct> {
  if (engine === 'sqlite') {
    const db = new Database(path.join(target, 'plainbase.db'));
    db.pragma('busy_timeout = 30000');
    return {
      run: async (text, values) => db.prepare(text.sqlite).run(...(values as never[])).changes,
      close: async () => void db.close(),
    };
  }
  const client = new pg.Client({ connectionString: target });
  await client.connect();
  return {
    run: async (text, values) => {
      // $1, $2, … for the ? of the SQLite text.
      let n = 0;
      return (await client.query(text.postgres.replace(/\?/g, () => `$${(n += 1)}`), values)).rowCount ?? 0;
    },
    close: () => client.end(),
  };
}

async function timed<T>(work: () => Promise<T>): Promise<{ seconds: number; value: T }> {
  const started = process.hrtime.bigint();
  const value = await work();
  return { seconds: Number(process.hrtime.bigint() - started) / 1e9, value };
}

async function benchEngine(engine: Engine): Promise<void> {
  const port = await freePort();
  const dataDir = makeTempDir(`plainbase-bench-bulk-${engine}-`);
  const databaseUrl = engine === 'postgres' ? await createDatabase(settings.pgUrl, 'bulk') : '';
  const env: Record<string, string> = {
    PLAINBASE_PORT: String(port),
    PLAINBASE_HOST: '127.0.0.1',
    PLAINBASE_DATA_DIR: dataDir,
    PLAINBASE_LOG_LEVEL: 'warn',
    PLAINBASE_WORKER: 'off',
    PLAINBASE_RATE_LIMIT_PER_KEY: '0',
    PLAINBASE_RATE_LIMIT_PER_IP: '0',
    PLAINBASE_BULK_MAX_RECORDS: String(Math.max(100_000, settings.records)),
    ...OWNER_ENV,
    PLAINBASE_DATABASE_URL: databaseUrl,
  };
  const server = await startServer({ name: `Plainbase (${engine})`, args: ['bin/plainbase.js', 'serve'], env, port, readyPath: '/readyz' });
  const direct = await directTo(engine, engine === 'postgres' ? databaseUrl : dataDir);
  try {
    const session = await signInOwner(server.baseUrl);
    const collection = expectStatus(await callJson(server.baseUrl, 'POST', '/v1/collections', session, { name: 'bench' }), 201, 'creating the collection').body as { id: string };
    expectStatus(await callJson(server.baseUrl, 'POST', '/v1/collections/bench/indexes', session, { name: 'status', fields: ['data.status'] }), 201, 'creating the index');
    const key = expectStatus(await callJson(server.baseUrl, 'POST', '/v1/keys', session, { name: 'bench', scopes: ['records:create', 'records:update', 'records:delete'] }), 201, 'creating a key');
    const authorization = `Bearer ${(key.body as { secret: string }).secret}`;
    const upload = await streamUpload({
      url: `${server.baseUrl}/v1/collections/bench/import`,
      headers: { authorization, 'content-type': 'application/x-ndjson' },
      chunks: () => ndjsonChunks(settings.records),
    });
    if (upload.status !== 200) throw new Error(`import: HTTP ${upload.status} ${upload.body.slice(0, 300)}`);
    console.log(`${engine}: imported ${thousands(settings.records)} records in ${fixed(upload.seconds, 1)} s; load ${fixed(loadAverage(), 1)}`);

    const scope = [collection.id];
    const baselineUpdate = await timed(() => direct.run({
      sqlite: `update records set data = json_set(data, '$.tier', 'gold'), revision = revision + 1, updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') where collection_id = ? and trashed_at is null`,
      postgres: `update records set data = data || '{"tier": "gold"}'::jsonb, revision = revision + 1, updated_at = to_char(now() at time zone 'utc', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') where collection_id = ? and trashed_at is null`,
    }, scope));
    const cpuBefore = readCpuSeconds(server.pid) ?? Number.NaN;
    const update = await timed(() => callJson(server.baseUrl, 'POST', '/v1/collections/bench/records/bulk-update', { authorization }, { filter: 'data.n >= 0', patch: { tier: 'silver', status: null } }));
    const updateCpu = (readCpuSeconds(server.pid) ?? Number.NaN) - cpuBefore;
    report(engine, 'bulk-update', update.seconds, updateCpu, baselineUpdate.seconds, baselineUpdate.value, update.value);

    const baselineTrash = await timed(() => direct.run({
      sqlite: `update records set trashed_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), revision = revision + 1 where collection_id = ? and trashed_at is null`,
      postgres: `update records set trashed_at = to_char(now() at time zone 'utc', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), revision = revision + 1 where collection_id = ? and trashed_at is null`,
    }, scope));
    // Back out of the trash, untimed, so the bulk-delete finds every record live again (the
    // revision stays one up: no version of it exists, which only the history would notice).
    await direct.run({ sqlite: 'update records set trashed_at = null where collection_id = ?', postgres: 'update records set trashed_at = null where collection_id = ?' }, scope);
    const cpuBeforeTrash = readCpuSeconds(server.pid) ?? Number.NaN;
    const trash = await timed(() => callJson(server.baseUrl, 'POST', '/v1/collections/bench/records/bulk-delete', { authorization }, { filter: 'data.n >= 0' }));
    const trashCpu = (readCpuSeconds(server.pid) ?? Number.NaN) - cpuBeforeTrash;
    report(engine, 'bulk-delete', trash.seconds, trashCpu, baselineTrash.seconds, baselineTrash.value, trash.value);
  } finally {
    await direct.close();
    await server.stop();
  }
}

function report(engine: Engine, what: string, seconds: number, cpu: number, baselineSeconds: number, baselineRows: number, reply: { status: number; body: unknown }): void {
  const ok = reply.status === 200;
  console.log(
    `${engine} ${what}: HTTP ${reply.status} ${JSON.stringify(reply.body).slice(0, 200)} in ${fixed(seconds, 2)} s` +
      ` (target ≤ ${TARGET_SECONDS} s: ${ok && seconds <= TARGET_SECONDS ? 'PASS' : 'MISS'}); server CPU ${fixed(cpu, 1)} s;` +
      ` baseline (one plain UPDATE of the same ${thousands(baselineRows)} rows) ${fixed(baselineSeconds, 2)} s, ratio ${fixed(seconds / baselineSeconds, 1)}×; load ${fixed(loadAverage(), 1)}`,
  );
}

cleanUpOnSignals();
try {
  console.log(`settings: BENCH_RECORDS=${settings.records} BENCH_ENGINES=${settings.engines.join(',')}; load ${fixed(loadAverage(), 1)}`);
  for (const engine of settings.engines) await benchEngine(engine);
} catch (error) {
  console.error(error);
  process.exitCode = 1;
} finally {
  await cleanupAll();
}
