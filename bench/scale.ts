/**
 * Benchmark of several processes on one PostgreSQL (`npm run bench:scale`): how request
 * throughput changes from one API process to two behind the same load. A report, never a test:
 * it prints figures and exits 0; it exits 1 only when it could not run at all.
 *
 * On a fresh database: one worker process (PLAINBASE_API=off) drains the event outbox all along;
 * API processes run with PLAINBASE_WORKER=off. Each scenario (create, get by id) runs first
 * against one API process with BENCH_CONNECTIONS connections, then against two, the same
 * connections split evenly (a load balancer's round-robin); req/s are summed. Each run has a
 * discarded warm-up. The ratio two/one is the figure to read: on a machine with few cores the
 * processes, PostgreSQL and the load generator share them, and the ratio says how much of a
 * second process's capacity the machine could give it (docs/scaling.md).
 *
 * Env: BENCH_SECONDS (8), BENCH_WARMUP_SECONDS (2), BENCH_CONNECTIONS (50), BENCH_GET_IDS (2000),
 * BENCH_PG_URL (postgres://postgres@127.0.0.1:5432).
 */
import os from 'node:os';
import path from 'node:path';
import { benchPostgresUrl, createDatabase, postgresVersion } from './support/databases.js';
import { callJson, expectStatus, inParallel } from './support/http.js';
import { measure, type LoadResult } from './support/load.js';
import { loadAverage } from './support/memory.js';
import { OWNER_ENV, signInOwner } from './support/owner.js';
import { cleanUpOnSignals, cleanupAll, freePort, makeTempDir, startServer, type Server } from './support/processes.js';
import { createBody } from './support/records.js';
import { wholeNumber } from './support/settings.js';
import { fixed, formatTable, thousands } from './support/table.js';

const settings = {
  seconds: wholeNumber('BENCH_SECONDS', 8, 1),
  warmupSeconds: wholeNumber('BENCH_WARMUP_SECONDS', 2, 0),
  connections: wholeNumber('BENCH_CONNECTIONS', 50, 2),
  getIds: wholeNumber('BENCH_GET_IDS', 2000, 1),
  pgUrl: benchPostgresUrl(),
};

const log = (line: string) => process.stdout.write(`${line}\n`);

async function startPlainbase(name: string, databaseUrl: string, dataDir: string, env: Record<string, string>): Promise<Server> {
  const port = await freePort();
  return startServer({
    name,
    args: ['bin/plainbase.js', 'serve'],
    port,
    // A worker-only process serves no HTTP: it says at info level when it runs.
    readyPath: env.PLAINBASE_API === 'off' ? { output: '"msg":"Plainbase is running"' } : '/readyz',
    env: {
      ...OWNER_ENV,
      PLAINBASE_PORT: String(port),
      PLAINBASE_HOST: '127.0.0.1',
      PLAINBASE_DATABASE_URL: databaseUrl,
      PLAINBASE_DATA_DIR: path.join(dataDir, name),
      PLAINBASE_LOG_LEVEL: env.PLAINBASE_API === 'off' ? 'info' : 'warn',
      PLAINBASE_RATE_LIMIT_PER_KEY: '0',
      PLAINBASE_RATE_LIMIT_PER_IP: '0',
      ...env,
    },
  });
}

/** The same load split over `apis` (connections divided evenly), run at once; req/s summed. */
async function spread(apis: Server[], run: (api: Server, connections: number) => Promise<LoadResult>): Promise<{ reqPerSec: number; p99: number; non2xx: number }> {
  const results = await Promise.all(apis.map((api, i) => run(api, Math.floor(settings.connections / apis.length) + (i < settings.connections % apis.length ? 1 : 0))));
  return {
    reqPerSec: results.reduce((sum, result) => sum + result.reqPerSec, 0),
    p99: Math.max(...results.map((result) => result.p99)),
    non2xx: results.reduce((sum, result) => sum + result.non2xx + result.errors, 0),
  };
}

async function main(): Promise<void> {
  cleanUpOnSignals();
  const version = await postgresVersion(settings.pgUrl);
  if (version instanceof Error) throw new Error(`PostgreSQL at ${settings.pgUrl} is not reachable: ${version.message}`);
  log(`bench:scale — ${os.cpus().length} cores, Node ${process.version}, PostgreSQL ${version}, ${settings.connections} connections, ${settings.seconds} s per figure`);

  const databaseUrl = await createDatabase(settings.pgUrl, 'scale');
  const dataDir = makeTempDir('plainbase-bench-scale-');
  const first = await startPlainbase('api-1', databaseUrl, dataDir, { PLAINBASE_WORKER: 'off' });
  const second = await startPlainbase('api-2', databaseUrl, dataDir, { PLAINBASE_WORKER: 'off' });
  await startPlainbase('worker', databaseUrl, dataDir, { PLAINBASE_API: 'off', PLAINBASE_WORKER: 'on' });

  const headers = await signInOwner(first.baseUrl);
  expectStatus(await callJson(first.baseUrl, 'POST', '/v1/collections', headers, { name: 'bench' }), 201, 'creating the collection');
  const ids = await inParallel(settings.getIds, 16, async () => {
    const reply = expectStatus(await callJson(first.baseUrl, 'POST', '/v1/collections/bench/records', headers, JSON.parse(createBody)), 201, 'creating a record');
    return (reply.body as { id: string }).id;
  });

  const scenarios = {
    create: (api: Server, connections: number) =>
      measure({ url: api.baseUrl, connections, seconds: settings.seconds, warmupSeconds: settings.warmupSeconds, method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, path: '/v1/collections/bench/records', body: createBody, serverPid: api.pid }),
    get: (api: Server, connections: number) =>
      measure({ url: api.baseUrl, connections, seconds: settings.seconds, warmupSeconds: settings.warmupSeconds, method: 'GET', headers, path: () => `/v1/collections/bench/records/${ids[Math.floor(Math.random() * ids.length)]}`, serverPid: api.pid }),
  };
  const rows: string[][] = [];
  for (const [name, run] of Object.entries(scenarios)) {
    const one = await spread([first], run);
    const two = await spread([first, second], run);
    log(`${name}: 1 API ${thousands(one.reqPerSec)} req/s, 2 APIs ${thousands(two.reqPerSec)} req/s (load ${fixed(loadAverage(), 1)})`);
    rows.push([name, thousands(one.reqPerSec), fixed(one.p99, 1), thousands(two.reqPerSec), fixed(two.p99, 1), fixed(two.reqPerSec / one.reqPerSec, 2), String(one.non2xx + two.non2xx)]);
  }
  log('');
  log(formatTable(['operation', '1 API req/s', 'p99 ms', '2 APIs req/s', 'p99 ms', '2 / 1', 'non-2xx'], rows));
}

main()
  .catch((error: unknown) => {
    process.stderr.write(`bench:scale could not run: ${(error as Error).stack ?? String(error)}\n`);
    process.exitCode = 1;
  })
  .finally(() => cleanupAll());
