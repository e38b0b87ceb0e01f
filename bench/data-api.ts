/**
 * Benchmark of the data API (`npm run bench:data`). A report, never a test: it prints figures
 * and exits 0 even when a target is missed (misses are printed as MISS); it exits 1 only when it
 * could not run at all.
 *
 * For each engine:
 * 1. The engine's bare baseline starts as its own process, seeded with BENCH_RECORDS records:
 *    Fastify + better-sqlite3 (bench/baseline-server.ts), or Fastify + pg over TCP with the same
 *    pool size as Plainbase (bench/baseline-postgres-server.ts, a fresh database of its own).
 * 2. Plainbase (`node bin/plainbase.js serve`) starts in a fresh data dir or a
 *    fresh PostgreSQL database: sign in, create a collection and an index on data.status, import
 *    BENCH_RECORDS records as one streamed NDJSON body (timed), create the records "get" reads.
 *    The loads start right after the import: no pause, no ANALYZE (tables that have just grown).
 * 3. Create, update (a PATCH of a seeded record), get and list at each connection count, the baseline first and Plainbase right
 *    after, so both see the machine in the same state; each run has a discarded warm-up.
 * 4. PostgreSQL only, unless BENCH_POOLER=0 or Debian's pgbouncer is missing: steps 2-3 again
 *    with Plainbase behind a PgBouncer in transaction mode (10 server connections, the
 *    baseline's pool size) and PLAINBASE_DATABASE_DIRECT_URL set, as 1 and as 2 API processes.
 * The load comes from autocannon in this process, separate from both servers. Server memory is
 * sampled from /proc/<pid>/status every 200 ms; server CPU time from /proc/<pid>/stat.
 *
 * Env: BENCH_SECONDS (10), BENCH_WARMUP_SECONDS (2), BENCH_RECORDS (1000000),
 * BENCH_CONNECTIONS ("10,50"), BENCH_ENGINES ("sqlite,postgres"), BENCH_GET_IDS (2000),
 * BENCH_PG_URL (postgres://postgres@127.0.0.1:5432), BENCH_CPU_PROF (a directory: the
 * Plainbase servers run with --cpu-prof and write their profiles there, with phases.json for
 * bench/support/profile-summary.ts), BENCH_LOG_LEVEL (info, the product's default),
 * BENCH_SLOW_PATHS (unset; a list of fast paths, src/db/fast-paths.ts: each Plainbase run is then
 * made twice, as it ships and with those paths off, back to back per scenario, reported as
 * two runs).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { benchPostgresUrl, createDatabase, postgresVersion } from './support/databases.js';
import { callJson, expectStatus, inParallel, streamUpload } from './support/http.js';
import { measure, type LoadResult } from './support/load.js';
import { loadAverage, MemorySampler, readCpuSeconds, type MemoryReport } from './support/memory.js';
import { OWNER_ENV, signInOwner } from './support/owner.js';
import { cleanUpOnSignals, cleanupAll, freePort, isInterrupted, makeTempDir, startServer, type Server } from './support/processes.js';
import { createBody, LIST_STATUS, ndjsonChunks } from './support/records.js';
import { fixed, formatTable, thousands } from './support/table.js';
import { benchEngines, benchLogLevel, wholeNumber } from './support/settings.js';
import { PGBOUNCER, startPgBouncer } from '../test/support/pgbouncer.js';

// ---------------------------------------------------------------------------------------------
// Settings and targets

type Engine = 'sqlite' | 'postgres';
type Scenario = 'create' | 'update' | 'get' | 'list';
const SCENARIOS: Scenario[] = ['create', 'update', 'get', 'list'];

function readSettings() {
  const connections = (process.env.BENCH_CONNECTIONS ?? '10,50').split(',').map((part) => Number(part.trim()));
  if (connections.some((c) => !Number.isInteger(c) || c < 1)) throw new Error('BENCH_CONNECTIONS must be a list of whole numbers, e.g. "10,50"');
  const engines = benchEngines();
  return {
    seconds: wholeNumber('BENCH_SECONDS', 10, 1),
    warmupSeconds: wholeNumber('BENCH_WARMUP_SECONDS', 2, 0),
    records: wholeNumber('BENCH_RECORDS', 1_000_000, 100),
    getIds: wholeNumber('BENCH_GET_IDS', 2000, 1),
    connections,
    engines: engines as Engine[],
    pgUrl: benchPostgresUrl(),
    cpuProfileDir: process.env.BENCH_CPU_PROF ? path.resolve(process.env.BENCH_CPU_PROF) : null,
    pooler: process.env.BENCH_POOLER !== '0' && pgbouncerInstalled(),
    slowPaths: process.env.BENCH_SLOW_PATHS?.trim() || null,
  };
}
type Settings = ReturnType<typeof readSettings>;

/** Server connections PgBouncer keeps to PostgreSQL: the baseline's pool size (BASELINE_POOL's default). */
const POOLER_SERVER_CONNECTIONS = 10;

function pgbouncerInstalled(): boolean {
  if (spawnSync(PGBOUNCER, ['--version']).status === 0) return true;
  process.stdout.write(`· ${PGBOUNCER} is not installed (apt-get install -y pgbouncer): no runs through PgBouncer\n`);
  return false;
}

/** The targets: request ratios to the bare baseline of the same engine, and the rest. */
const TARGET = {
  ratio: {
    sqlite: { create: 0.4, update: 0.3, get: 0.5, list: 0.6 },
    postgres: { create: 0.35, update: 0.3, get: 0.45, list: 0.5 },
  } as Record<Engine, Record<Scenario, number>>,
  importPerSecond: 50_000,
  listP99Ms: 20,
  listP99AtConnections: 10,
  memoryMb: 400,
};

// ---------------------------------------------------------------------------------------------
// Servers under load

interface Target {
  /** One server's origin, or several servers' (the connections are spread over them). */
  url: string | string[];
  headers: Record<string, string>;
  createPath: string;
  getPath: (id: string) => string;
  /** null: not measured, `listSkipped` says why. */
  listPath: string | null;
  listSkipped?: string;
}

/** A started server, ready to be loaded. */
interface Prepared {
  label: string;
  server: Server;
  /** Every process serving the target (server's first): their CPU time together is reported. */
  pids: number[];
  sampler: MemorySampler;
  target: Target;
  /** Records created through the API before the loads: "get" asks for random ones of these. */
  ids: string[];
  notes: string[];
}

interface Measured {
  scenario: Scenario;
  connections: number;
  load: LoadResult | null;
  skipped?: string;
  /** Milliseconds after the server was spawned: where this run sits in a --cpu-prof profile. */
  window?: { from: number; to: number };
}

type ImportRun = { records: number; seconds: number; status: number; body: string; window: { from: number; to: number } } | { skipped: string };

interface EngineRun {
  label: string;
  engine: Engine;
  measured: Measured[];
  /** The baseline, measured right before each Plainbase run of the same scenario. */
  baseline: Measured[];
  importRun: ImportRun;
  memory: MemoryReport;
  notes: string[];
}

const log = (line: string) => {
  if (!isInterrupted()) process.stdout.write(`· ${line}\n`);
};

function describe(load: LoadResult): string {
  const trouble = load.non2xx || load.errors ? `, non-2xx ${load.non2xx}, errors ${load.errors} ${JSON.stringify(load.statusCodes)}` : '';
  return `${thousands(load.reqPerSec)} req/s, p50 ${fixed(load.p50, 2)} ms, p99 ${fixed(load.p99, 2)} ms, server CPU ${fixed(load.serverCpuMsPerRequest, 3)} ms/req (${fixed(load.serverCpuShare * 100, 0)}% of a core), load ${fixed(load.loadAverage, 1)}${trouble}`;
}

let updates = 0;

async function loadOnce(prepared: Prepared, scenario: Scenario, connections: number, settings: Settings): Promise<Measured> {
  const { target, sampler, ids } = prepared;
  if (scenario === 'list' && target.listPath === null) return { scenario, connections, load: null, skipped: target.listSkipped };
  sampler.setPhase(`${scenario}@${connections}`);
  const from = Date.now() - prepared.server.startedAt;
  const base = { url: target.url, connections, seconds: settings.seconds, warmupSeconds: settings.warmupSeconds, serverPid: prepared.pids };
  const load =
    scenario === 'create'
      ? await measure({ ...base, method: 'POST', headers: { ...target.headers, 'content-type': 'application/json' }, path: target.createPath, body: createBody })
      : scenario === 'update'
        // A PATCH of a seeded record with a value of its own, so every update writes a new revision.
        ? await measure({ ...base, method: 'PATCH', headers: { ...target.headers, 'content-type': 'application/json' }, path: () => target.getPath(ids[Math.floor(Math.random() * ids.length)]!), body: () => `{"data":{"touched":${++updates}}}` })
      : scenario === 'get'
        ? await measure({ ...base, method: 'GET', headers: target.headers, path: () => target.getPath(ids[Math.floor(Math.random() * ids.length)]!) })
        : await measure({ ...base, method: 'GET', headers: target.headers, path: target.listPath! });
  log(`${prepared.label}, ${scenario} at ${connections} connections: ${describe(load)}`);
  return { scenario, connections, load, window: { from, to: Date.now() - prepared.server.startedAt } };
}

/**
 * Each scenario and connection count: the baseline, then Plainbase, back to back, so both see
 * the machine in the same state (other work on a shared machine moves both figures together).
 */
async function interleave(baseline: Prepared, plainbases: Prepared[], settings: Settings): Promise<{ baseline: Measured[]; plainbase: Measured[][] }> {
  const result = { baseline: [] as Measured[], plainbase: plainbases.map(() => [] as Measured[]) };
  for (const scenario of SCENARIOS) {
    for (const connections of settings.connections) {
      result.baseline.push(await loadOnce(baseline, scenario, connections, settings));
      for (const [index, plainbase] of plainbases.entries()) result.plainbase[index]!.push(await loadOnce(plainbase, scenario, connections, settings));
    }
  }
  return result;
}

const firstUrl = (target: Target): string => [target.url].flat()[0]!;

/** Creates `count` records through the API and returns their ids (the pool "get" draws from). */
async function createIds(target: Target, count: number): Promise<string[]> {
  return inParallel(count, 8, async () => {
    const reply = await callJson(firstUrl(target), 'POST', target.createPath, target.headers, JSON.parse(createBody));
    expectStatus(reply, 201, 'creating a record for the get pool');
    return (reply.body as { id: string }).id;
  });
}

/** One list call before the load: it must answer 50 records, all with the filtered status. */
async function checkList(target: Target): Promise<string | null> {
  const reply = await callJson(firstUrl(target), 'GET', target.listPath!, target.headers);
  const rows = (reply.body as { data?: { data: { status?: string } }[] })?.data;
  if (reply.status !== 200 || !Array.isArray(rows)) return `list answered ${reply.status} ${JSON.stringify(reply.body).slice(0, 300)}`;
  if (rows.length !== 50) return `list answered ${rows.length} records, not 50`;
  if (rows.some((row) => row.data?.status !== LIST_STATUS)) return `list answered records whose status is not ${LIST_STATUS}`;
  return null;
}

// ---------------------------------------------------------------------------------------------
// The baseline

/**
 * The bare server of an engine: bench/baseline-server.ts (Fastify + better-sqlite3, a file of its
 * own) or bench/baseline-postgres-server.ts (Fastify + pg, a database of its own, over TCP with
 * Plainbase's pool size).
 */
async function prepareBaseline(settings: Settings, engine: Engine): Promise<Prepared & { seedSeconds: number }> {
  const port = await freePort();
  const env: Record<string, string> =
    engine === 'sqlite'
      ? { BASELINE_DB: path.join(makeTempDir('plainbase-bench-baseline-'), 'baseline.db') }
      : { BASELINE_PG_URL: await createDatabase(settings.pgUrl, 'baseline') };
  log(`baseline (${engine}): starting, seeding ${thousands(settings.records)} records…`);
  const server = await startServer({
    name: `baseline server (${engine})`,
    args: ['--import', 'tsx', engine === 'sqlite' ? 'bench/baseline-server.ts' : 'bench/baseline-postgres-server.ts'],
    env: { ...env, BASELINE_PORT: String(port), BASELINE_SEED: String(settings.records) },
    port,
    readyPath: '/readyz',
    readyTimeoutMs: 900_000,
  });
  const sampler = new MemorySampler(server.pid).start();
  const info = await callJson<{ seeded: number; seedSeconds: number }>(server.baseUrl, 'GET', '/info', {});
  log(`baseline (${engine}): seeded in ${fixed(info.body.seedSeconds, 1)} s`);
  const target: Target = {
    url: server.baseUrl,
    headers: {},
    createPath: '/records',
    getPath: (id) => `/records/${id}`,
    listPath: `/records?status=${LIST_STATUS}&limit=50`,
  };
  const notes: string[] = [];
  const problem = await checkList(target);
  if (problem) {
    target.listPath = null;
    target.listSkipped = problem;
    notes.push(`list not measured: ${problem}`);
  }
  sampler.setPhase('get pool');
  const ids = await createIds(target, settings.getIds);
  return { label: `baseline (${engine})`, server, pids: [server.pid], sampler, target, ids, notes, seedSeconds: info.body.seedSeconds };
}

// ---------------------------------------------------------------------------------------------
// Plainbase

/** The API routes this build serves, as "METHOD /path/{param}", from its OpenAPI document. */
async function routesOf(server: Server): Promise<Set<string>> {
  const reply = await callJson<{ paths?: Record<string, Record<string, unknown>> }>(server.baseUrl, 'GET', '/v1/openapi.json', {});
  expectStatus(reply, 200, 'reading /v1/openapi.json');
  const routes = new Set<string>();
  for (const [route, methods] of Object.entries(reply.body.paths ?? {})) {
    for (const method of Object.keys(methods)) routes.add(`${method.toUpperCase()} ${route}`);
  }
  return routes;
}

/**
 * The credential the loads send: an API key (what a program calling the data API uses) when this
 * build issues and accepts them, otherwise the owner's session.
 */
async function credentialFor(server: Server, routes: Set<string>, session: Record<string, string>, notes: string[]): Promise<Record<string, string>> {
  if (!routes.has('POST /v1/keys')) {
    notes.push('credential: session cookie (this build has no POST /v1/keys)');
    return session;
  }
  const created = await callJson(server.baseUrl, 'POST', '/v1/keys', session, { name: 'bench', scopes: ['collections:read', 'records:read', 'records:create', 'records:update'] });
  const secret = (created.body as { secret?: string }).secret;
  if (created.status !== 201 || !secret) {
    notes.push(`credential: session cookie (POST /v1/keys answered ${created.status})`);
    return session;
  }
  const bearer = { authorization: `Bearer ${secret}` };
  const probe = await callJson(server.baseUrl, 'GET', '/v1/collections/bench', bearer);
  if (probe.status !== 200) {
    const code = (probe.body as { error?: { code?: string } }).error?.code ?? '';
    notes.push(`credential: session cookie (an API key was refused: ${probe.status} ${code})`);
    return session;
  }
  notes.push('credential: API key (Authorization: Bearer)');
  return bearer;
}

/**
 * How Plainbase is run: on its own connection to the database, or through a PgBouncer in
 * transaction mode (the pooler managed PostgreSQL puts in front) with the direct URL beside it,
 * as one process or two (the second with PLAINBASE_WORKER=off, the load spread over both).
 */
interface Variant {
  pooled: boolean;
  processes: 1 | 2;
}
const DIRECT: Variant = { pooled: false, processes: 1 };

function labelOf(engine: Engine, variant: Variant): string {
  if (engine === 'sqlite') return 'Plainbase on SQLite';
  if (!variant.pooled) return 'Plainbase on PostgreSQL';
  return `Plainbase on PostgreSQL through PgBouncer (${variant.processes === 1 ? '1 process' : '2 processes'})`;
}

async function preparePlainbase(engine: Engine, settings: Settings, variant: Variant, slowPaths: string | null = null): Promise<Prepared & { importRun: ImportRun; stop(): Promise<void> }> {
  const label = `${labelOf(engine, variant)}${slowPaths ? `, ${slowPaths} off` : ''}`;
  const dir = makeTempDir(`plainbase-bench-${engine}-`);
  const port = await freePort();
  const env: Record<string, string> = {
    PLAINBASE_PORT: String(port),
    PLAINBASE_HOST: '127.0.0.1',
    PLAINBASE_DATA_DIR: dir,
    PLAINBASE_LOG_LEVEL: benchLogLevel(),
    PLAINBASE_RATE_LIMIT_PER_KEY: '0',
    PLAINBASE_RATE_LIMIT_PER_IP: '0',
    ...OWNER_ENV,
    // Empty means "not set" to Plainbase: SQLite in the data dir, whatever the caller's env says.
    PLAINBASE_DATABASE_URL: '',
    PLAINBASE_DATABASE_DIRECT_URL: '',
    PLAINBASE_SLOW_PATHS: slowPaths ?? '',
  };
  const stops: (() => Promise<void>)[] = [];
  const stop = async () => {
    for (const step of stops.reverse()) await step();
  };
  if (engine === 'postgres') {
    const url = await createDatabase(settings.pgUrl, 'data');
    env.PLAINBASE_DATABASE_URL = url;
    if (variant.pooled) {
      // As many server connections as the baseline's pool: the processes share them.
      const bouncer = await startPgBouncer({ poolMode: 'transaction', poolSize: POOLER_SERVER_CONNECTIONS, upstream: url });
      stops.push(() => bouncer.stop());
      env.PLAINBASE_DATABASE_URL = bouncer.url;
      env.PLAINBASE_DATABASE_DIRECT_URL = url;
    }
  }
  // One profile per thread (the main thread's is the large one; tsx's loader runs in another).
  const profile = settings.cpuProfileDir && !variant.pooled ? ['--cpu-prof', `--cpu-prof-dir=${path.join(settings.cpuProfileDir, engine)}`] : [];

  log(`${label}: starting`);
  try {
    const server = await startServer({ name: label, args: [...profile, 'bin/plainbase.js', 'serve'], env, port, readyPath: '/readyz' });
    stops.push(() => server.stop());
    const servers = [server];
    if (variant.processes === 2) {
      const secondPort = await freePort();
      const second = await startServer({ name: `${label}, second process`, args: ['bin/plainbase.js', 'serve'], env: { ...env, PLAINBASE_PORT: String(secondPort), PLAINBASE_WORKER: 'off' }, port: secondPort, readyPath: '/readyz' });
      stops.push(() => second.stop());
      servers.push(second);
    }
    const sampler = new MemorySampler(server.pid).start();
    stops.push(async () => void sampler.stop());
    const ready = await setUpPlainbase(server, sampler, label, settings);
    if (servers.length > 1) ready.target.url = servers.map((one) => one.baseUrl);
    return { label, server, pids: servers.map((one) => one.pid), sampler, stop, ...ready };
  } catch (error) {
    await stop();
    throw error;
  }
}

async function setUpPlainbase(server: Server, sampler: MemorySampler, label: string, settings: Settings) {
  const notes: string[] = [];
  const session = await signInOwner(server.baseUrl);

  const routes = await routesOf(server);
  expectStatus(await callJson(server.baseUrl, 'POST', '/v1/collections', session, { name: 'bench' }), 201, 'creating the collection');
  const headers = await credentialFor(server, routes, session, notes);

  if (routes.has('POST /v1/collections/{col}/indexes')) {
    const reply = await callJson(server.baseUrl, 'POST', '/v1/collections/bench/indexes', session, { name: 'status', fields: ['data.status'] });
    if (reply.status < 200 || reply.status > 299) throw new Error(`creating the index: ${reply.status} ${JSON.stringify(reply.body)}`);
  } else {
    notes.push('this build has no POST /v1/collections/{col}/indexes: no index on data.status');
  }

  let importRun: ImportRun;
  if (routes.has('POST /v1/collections/{col}/import')) {
    sampler.setPhase('import');
    log(`${label}: importing ${thousands(settings.records)} records (streamed NDJSON)…`);
    const cpuBefore = readCpuSeconds(server.pid) ?? Number.NaN;
    const from = Date.now() - server.startedAt;
    const upload = await streamUpload({
      url: `${server.baseUrl}/v1/collections/bench/import`,
      headers: { ...headers, 'content-type': 'application/x-ndjson' },
      chunks: () => ndjsonChunks(settings.records),
    });
    const cpu = (readCpuSeconds(server.pid) ?? Number.NaN) - cpuBefore;
    importRun = { records: settings.records, seconds: upload.seconds, status: upload.status, body: upload.body, window: { from, to: Date.now() - server.startedAt } };
    log(`  HTTP ${upload.status} in ${fixed(upload.seconds, 1)} s (${thousands(settings.records / upload.seconds)} records/s, server CPU ${fixed(cpu, 1)} s, load ${fixed(loadAverage(), 1)}): ${upload.body.slice(0, 300)}`);
    if (upload.status < 200 || upload.status > 299) notes.push(`import answered ${upload.status}: ${upload.body.slice(0, 300)}`);
    // No pause and no ANALYZE after it: the loads start at once, on tables that have just grown,
    // while the worker still fans out the import's events, as a growing service meets them.
  } else {
    importRun = { skipped: 'this build has no POST /v1/collections/{col}/import' };
  }

  const target: Target = {
    url: server.baseUrl,
    headers,
    createPath: '/v1/collections/bench/records',
    getPath: (id) => `/v1/collections/bench/records/${id}`,
    listPath: `/v1/collections/bench/records?filter=${encodeURIComponent(`data.status = "${LIST_STATUS}"`)}&limit=50`,
  };
  if (!routes.has('GET /v1/collections/{col}/records')) {
    target.listPath = null;
    target.listSkipped = 'this build has no GET /v1/collections/{col}/records';
  } else if ('skipped' in importRun || importRun.status < 200 || importRun.status > 299) {
    target.listPath = null;
    target.listSkipped = `the collection could not be filled with ${thousands(settings.records)} records (no import)`;
  } else {
    const problem = await checkList(target);
    if (problem) {
      target.listPath = null;
      target.listSkipped = problem;
    }
  }
  if (target.listSkipped) notes.push(`list not measured: ${target.listSkipped}`);

  sampler.setPhase('get pool');
  const ids = await createIds(target, settings.getIds);
  return { target, ids, notes, importRun };
}

async function benchEngine(engine: Engine, baseline: Prepared, settings: Settings, variant: Variant): Promise<EngineRun[]> {
  const plainbase = await preparePlainbase(engine, settings, variant);
  const slow = settings.slowPaths ? await preparePlainbase(engine, settings, variant, settings.slowPaths).catch(async (error) => {
    await plainbase.stop();
    throw error;
  }) : null;
  try {
    const measured = await interleave(baseline, slow ? [plainbase, slow] : [plainbase], settings);
    if (settings.cpuProfileDir && !variant.pooled) {
      // For bench/support/profile-summary.ts: which part of the profile each run is.
      const phases = [
        ...('window' in plainbase.importRun ? [{ phase: 'import', ...plainbase.importRun.window }] : []),
        ...measured.plainbase[0]!.filter((m) => m.window).map((m) => ({ phase: `${m.scenario}@${m.connections}`, ...m.window })),
      ];
      fs.mkdirSync(path.join(settings.cpuProfileDir, engine), { recursive: true });
      fs.writeFileSync(path.join(settings.cpuProfileDir, engine, 'phases.json'), `${JSON.stringify(phases, null, 2)}\n`);
    }
    return [plainbase, ...(slow ? [slow] : [])].map((run, index) => ({
      label: run.label,
      engine,
      measured: measured.plainbase[index]!,
      baseline: measured.baseline,
      importRun: run.importRun,
      memory: run.sampler.stop(),
      notes: run.notes,
    }));
  } finally {
    await slow?.stop();
    await plainbase.stop();
  }
}

/**
 * SQLite runs as one process on its file. PostgreSQL runs on its own connection, then (unless
 * BENCH_POOLER=0, or without Debian's pgbouncer) through PgBouncer in transaction mode as one
 * process and as two.
 */
function variantsOf(engine: Engine, settings: Settings): Variant[] {
  if (engine === 'sqlite' || !settings.pooler) return [DIRECT];
  return [DIRECT, { pooled: true, processes: 1 }, { pooled: true, processes: 2 }];
}

// ---------------------------------------------------------------------------------------------
// The report

const verdict = (pass: boolean) => (pass ? 'PASS' : 'MISS');

function machine(): string[] {
  const cpus = os.cpus();
  const sqlite = new Database(':memory:');
  const sqliteVersion = (sqlite.prepare('select sqlite_version() as v').get() as { v: string }).v;
  sqlite.close();
  return [
    `${cpus[0]?.model.trim() ?? 'unknown CPU'}, ${cpus.length} cores, ${fixed(os.totalmem() / 1024 ** 3, 1)} GiB RAM, Linux ${os.release()}`,
    `Node ${process.version}, SQLite ${sqliteVersion} (better-sqlite3), autocannon 9 (in the bench process; servers are separate processes)`,
  ];
}

interface Check {
  what: string;
  pass: boolean;
}

function engineReport(run: EngineRun): { text: string; checks: Check[] } {
  const checks: Check[] = [];
  const troubles: string[] = [];
  const rows = run.measured.map(({ scenario, connections, load, skipped }) => {
    const base = run.baseline.find((m) => m.scenario === scenario && m.connections === connections)?.load ?? null;
    const target = `≥ ${fixed(TARGET.ratio[run.engine][scenario], 2)}`;
    const baseCells = base ? [thousands(base.reqPerSec), fixed(base.p50, 2), fixed(base.p99, 2), fixed(base.serverCpuMsPerRequest, 3)] : ['n/a', '', '', ''];
    if (base && (base.non2xx || base.errors)) troubles.push(`baseline ${scenario}@${connections}: non-2xx ${base.non2xx}, errors ${base.errors} ${JSON.stringify(base.statusCodes)}`);
    if (!load) {
      checks.push({ what: `${scenario}@${connections}: not measured (${skipped})`, pass: false });
      return [scenario, String(connections), 'n/a', '', '', '', ...baseCells, '', '', target, 'MISS', ''];
    }
    const ratio = base ? load.reqPerSec / base.reqPerSec : Number.NaN;
    const clean = load.non2xx === 0 && load.errors === 0;
    if (!clean) troubles.push(`${scenario}@${connections}: non-2xx ${load.non2xx}, errors ${load.errors} ${JSON.stringify(load.statusCodes)}`);
    const pass = Number.isFinite(ratio) && ratio >= TARGET.ratio[run.engine][scenario] && clean;
    checks.push({ what: `${scenario}@${connections}: ${fixed(ratio, 2)} of the baseline's req/s (target ${target})${clean ? '' : ', with errors'}`, pass });
    const loadAvg = Math.max(load.loadAverage, base?.loadAverage ?? 0);
    const cpuRatio = base ? base.serverCpuMsPerRequest / load.serverCpuMsPerRequest : Number.NaN;
    return [scenario, String(connections), thousands(load.reqPerSec), fixed(load.p50, 2), fixed(load.p99, 2), fixed(load.serverCpuMsPerRequest, 3), ...baseCells, fixed(ratio, 2), fixed(cpuRatio, 2), target, verdict(pass), fixed(loadAvg, 1)];
  });
  const lines = [
    formatTable(
      ['scenario', 'conns', 'req/s', 'p50 ms', 'p99 ms', 'CPU ms/req', 'base req/s', 'base p50', 'base p99', 'base CPU', 'ratio', 'CPU ratio', 'target', 'result', 'load'],
      rows,
    ),
    '',
  ];
  for (const trouble of troubles) lines.push(`errors: ${trouble}`);
  for (const { scenario, connections, skipped } of run.measured) if (skipped) lines.push(`${scenario}@${connections} not measured: ${skipped}`);

  const list = run.measured.find((m) => m.scenario === 'list' && m.connections === TARGET.listP99AtConnections);
  if (list?.load) {
    const pass = list.load.p99 < TARGET.listP99Ms;
    checks.push({ what: `list p99 at ${TARGET.listP99AtConnections} connections: ${fixed(list.load.p99, 2)} ms (target < ${TARGET.listP99Ms} ms)`, pass });
    lines.push(`list p99 at ${TARGET.listP99AtConnections} connections: ${fixed(list.load.p99, 2)} ms   target < ${TARGET.listP99Ms} ms   ${verdict(pass)}`);
  } else {
    checks.push({ what: `list p99 at ${TARGET.listP99AtConnections} connections: not measured`, pass: false });
    lines.push(`list p99 at ${TARGET.listP99AtConnections} connections: not measured   MISS`);
  }

  const imported = run.importRun;
  if ('skipped' in imported) {
    checks.push({ what: `import: not measured (${imported.skipped})`, pass: false });
    lines.push(`import: not measured (${imported.skipped})   MISS`);
  } else {
    const perSecond = imported.records / imported.seconds;
    const ok = imported.status >= 200 && imported.status <= 299;
    const pass = ok && perSecond >= TARGET.importPerSecond;
    checks.push({ what: `import: ${thousands(perSecond)} records/s (target ≥ ${thousands(TARGET.importPerSecond)})${ok ? '' : `, answered HTTP ${imported.status}`}`, pass });
    lines.push(
      `import: ${thousands(imported.records)} records in ${fixed(imported.seconds, 1)} s = ${thousands(perSecond)} records/s   target ≥ ${thousands(TARGET.importPerSecond)}   ${verdict(pass)}${ok ? '' : `   (HTTP ${imported.status})`}`,
    );
  }

  const { memory } = run;
  const peak = Math.max(memory.peakHwmMb, memory.maxRssMb);
  const memoryPass = peak < TARGET.memoryMb;
  checks.push({ what: `peak server memory: ${fixed(peak, 0)} MB (target < ${TARGET.memoryMb} MB)`, pass: memoryPass });
  lines.push(`server memory: peak VmHWM ${fixed(memory.peakHwmMb, 0)} MB (max sampled VmRSS ${fixed(memory.maxRssMb, 0)} MB, ${memory.samples} samples)   target < ${TARGET.memoryMb} MB   ${verdict(memoryPass)}`);
  lines.push(`  max VmRSS by phase, MB: ${[...memory.maxRssMbByPhase].map(([phase, mb]) => `${phase} ${fixed(mb, 0)}`).join(', ')}`);
  for (const note of run.notes) lines.push(`note: ${note}`);
  return { text: lines.join('\n'), checks };
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const settings = readSettings();
  cleanUpOnSignals();
  if (settings.cpuProfileDir) fs.mkdirSync(settings.cpuProfileDir, { recursive: true });

  const header: string[] = [
    'Plainbase data API benchmark',
    `settings: BENCH_RECORDS=${settings.records} BENCH_SECONDS=${settings.seconds} BENCH_WARMUP_SECONDS=${settings.warmupSeconds} (warm-up discarded) BENCH_CONNECTIONS=${settings.connections.join(',')} BENCH_ENGINES=${settings.engines.join(',')} BENCH_GET_IDS=${settings.getIds}${settings.slowPaths ? ` BENCH_SLOW_PATHS=${settings.slowPaths}` : ''}`,
    ...machine().map((line) => `machine: ${line}`),
  ];
  let engines = settings.engines;
  if (engines.includes('postgres')) {
    const version = await postgresVersion(settings.pgUrl);
    if (version instanceof Error) {
      header.push(`PostgreSQL: skipped, cannot connect to ${settings.pgUrl}: ${version.message}`);
      engines = engines.filter((engine) => engine !== 'postgres');
    } else {
      header.push(`machine: PostgreSQL ${version} at ${settings.pgUrl}, same machine`);
    }
  }
  if (settings.cpuProfileDir) header.push(`Plainbase servers ran with --cpu-prof; profiles in ${settings.cpuProfileDir}`);
  header.push(`load average at start: ${fixed(loadAverage(), 1)} (on ${os.cpus().length} cores; higher means other work shared the machine)`);
  process.stdout.write(`${header.join('\n')}\n\n`);

  const started = Date.now();
  const runs: { run: EngineRun; baseline: { seedSeconds: number; memory: MemoryReport; notes: string[] } }[] = [];
  const failures: string[] = [];
  for (const engine of engines) {
    if (isInterrupted()) break;
    try {
      const baseline = await prepareBaseline(settings, engine);
      try {
        for (const variant of variantsOf(engine, settings)) {
          if (isInterrupted()) break;
          try {
            for (const run of await benchEngine(engine, baseline, settings, variant)) {
              runs.push({ run, baseline: { seedSeconds: baseline.seedSeconds, memory: baseline.sampler.report(), notes: baseline.notes } });
            }
          } catch (error) {
            failures.push(`${labelOf(engine, variant)}: ${(error as Error).message}`);
            log(`${labelOf(engine, variant)}: FAILED: ${(error as Error).message}`);
          }
        }
      } finally {
        baseline.sampler.stop();
        await baseline.server.stop();
      }
    } catch (error) {
      failures.push(`${engine}: ${(error as Error).message}`);
      log(`${engine}: FAILED: ${(error as Error).message}`);
    }
  }

  if (isInterrupted()) return;
  const out: string[] = ['', '='.repeat(120), ...header, `load average at end: ${fixed(loadAverage(), 1)}; the run took ${fixed((Date.now() - started) / 60_000, 1)} min`, ''];
  out.push('Columns: req/s = 2xx responses per second; p50/p99 = latency of 2xx responses; CPU ms/req = server process CPU time per response;');
  out.push('base = the bare baseline measured right before, same scenario and connections; ratio = req/s over base req/s (what the targets judge);');
  out.push('CPU ratio = base CPU ms/req over CPU ms/req (the ratio to expect when both servers are CPU-bound; less sensitive to other load); load = 1-min load average.');

  const summary: string[] = [];
  const baselinesShown = new Set<Engine>();
  for (const { run, baseline } of runs) {
    if (!baselinesShown.has(run.engine)) out.push(
      '',
      run.engine === 'sqlite'
        ? '## Baseline: bare Fastify + better-sqlite3 (WAL, synchronous=NORMAL, one insert per request, no auth)'
        : '## Baseline: bare Fastify + pg (a pool of 10 over TCP, one statement per request, no auth, no transaction)',
      `seeded ${thousands(settings.records)} records without HTTP in ${fixed(baseline.seedSeconds, 1)} s (reference only); server memory: peak VmHWM ${fixed(baseline.memory.peakHwmMb, 0)} MB`,
      ...baseline.notes.map((note) => `note: ${note}`),
    );
    baselinesShown.add(run.engine);
    const { text, checks } = engineReport(run);
    out.push('', `## ${run.label} (ratios to the ${run.engine === 'sqlite' ? 'SQLite' : 'PostgreSQL'} baseline above)`, text);
    const missed = checks.filter((check) => !check.pass);
    summary.push(`${run.label}: ${checks.length - missed.length} of ${checks.length} targets met`);
    for (const check of checks) summary.push(`  ${verdict(check.pass)} ${check.what}`);
  }
  for (const failure of failures) summary.push(`FAILED ${failure}`);
  out.push('', '## Summary', ...summary, '');
  process.stdout.write(`${out.join('\n')}\n`);
}

try {
  await main();
} catch (error) {
  process.stderr.write(`bench: ${(error as Error).stack ?? String(error)}\n`);
  process.exitCode = 1;
} finally {
  await cleanupAll();
}
