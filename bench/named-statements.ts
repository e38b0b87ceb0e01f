/**
 * Named against unnamed statements on a direct PostgreSQL connection (`npm run bench:statements`).
 * A report, never a test: it prints figures and exits 0.
 *
 * Behind a transaction-mode pooler (PLAINBASE_DATABASE_DIRECT_URL set) the pool sends every
 * statement unnamed (direct-query.ts): PostgreSQL parses and plans it on every call. On a direct
 * connection Plainbase keeps named statements, parsed once per connection; this measures what
 * that keeps. Two Plainbase processes on one fresh database, alike but for that:
 * - named: PLAINBASE_DATABASE_URL only (as shipped on a direct connection);
 * - unnamed: the same URL also as PLAINBASE_DATABASE_DIRECT_URL, which makes the pool send
 *   unnamed statements as it does behind a pooler (the server is still direct, so only the
 *   statements differ).
 * Loads, each on both servers in turn (named, unnamed, named, unnamed; the two runs of each are
 * added): GET /v1/me with a key (the key check), and a page of 50 records with a filter and a
 * sort. Ratio = named over unnamed req/s, in the same run.
 *
 * Env: BENCH_SECONDS (5 per run), BENCH_CONNECTIONS (20), BENCH_PG_URL (postgres://postgres@127.0.0.1:5432).
 */
import os from 'node:os';
import autocannon, { type Result } from 'autocannon';
import { benchPostgresUrl, createDatabase, postgresVersion } from './support/databases.js';
import { callJson, expectStatus, inParallel } from './support/http.js';
import { OWNER_ENV, signInOwner } from './support/owner.js';
import { cleanUpOnSignals, cleanupAll, freePort, makeTempDir, startServer, type Server } from './support/processes.js';
import { wholeNumber } from './support/settings.js';
import { fixed, formatTable, thousands } from './support/table.js';

const log = (line: string) => process.stdout.write(`· ${line}\n`);
const RECORDS = 5000;

function load(url: string, headers: Record<string, string>, seconds: number, connections: number): Promise<Result> {
  return new Promise((resolve, reject) => {
    autocannon({ url, headers, duration: seconds, connections }, (error, result) => (error ? reject(error) : resolve(result)));
  });
}

async function main(): Promise<void> {
  cleanUpOnSignals();
  const seconds = wholeNumber('BENCH_SECONDS', 5, 1);
  const connections = wholeNumber('BENCH_CONNECTIONS', 20, 1);
  const pgUrl = benchPostgresUrl();
  const version = await postgresVersion(pgUrl);
  if (version instanceof Error) throw version;
  const url = await createDatabase(pgUrl, 'statements');
  const start = async (name: string, env: Record<string, string>): Promise<Server> => {
    const port = await freePort();
    return startServer({
      name,
      args: ['bin/plainbase.js', 'serve'],
      env: { ...OWNER_ENV, PLAINBASE_PORT: String(port), PLAINBASE_HOST: '127.0.0.1', PLAINBASE_DATA_DIR: makeTempDir('plainbase-bench-statements-'), PLAINBASE_DATABASE_URL: url, PLAINBASE_RATE_LIMIT_PER_KEY: '0', PLAINBASE_RATE_LIMIT_PER_IP: '0', PLAINBASE_LOG_LEVEL: 'warn', PLAINBASE_WORKER: 'off', ...env },
      port,
      readyPath: '/readyz',
    });
  };
  const named = await start('named', {});
  const unnamed = await start('unnamed', { PLAINBASE_DATABASE_DIRECT_URL: url });
  const session = await signInOwner(named.baseUrl);
  const secret = expectStatus(await callJson<{ secret: string }>(named.baseUrl, 'POST', '/v1/keys', session, { name: 'bench', scopes: ['collections:read', 'records:read', 'records:create'] }), 201, 'creating a key').body.secret;
  const key = { authorization: `Bearer ${secret}` };
  expectStatus(await callJson(named.baseUrl, 'POST', '/v1/collections', session, { name: 'items' }), 201, 'creating a collection');
  log(`writing ${RECORDS} records`);
  await inParallel(RECORDS, 16, async (i) => expectStatus(await callJson(named.baseUrl, 'POST', '/v1/collections/items/records', key, { data: { i, group: i % 10 } }), 201, 'a create'));
  const list = `/v1/collections/items/records?limit=50&filter=${encodeURIComponent('data.group = 3')}&sort=-createdAt`;
  for (const server of [named, unnamed]) {
    expectStatus(await callJson(server.baseUrl, 'GET', '/v1/me', key), 200, `${server.name}: /v1/me`);
    expectStatus(await callJson(server.baseUrl, 'GET', list, key), 200, `${server.name}: the list`);
  }

  const loads = [
    { name: 'key check (GET /v1/me)', path: '/v1/me' },
    { name: 'list 50 (filter, sort)', path: list },
  ];
  const rows: string[][] = [];
  const summary: string[] = [];
  for (const { name, path } of loads) {
    const done = { named: { ok: 0, seconds: 0, p99: 0, bad: 0 }, unnamed: { ok: 0, seconds: 0, p99: 0, bad: 0 } };
    // A short warm-up of each, then two alternating runs: drift on a shared machine hits both.
    for (const server of [named, unnamed]) await load(`${server.baseUrl}${path}`, key, 1, connections);
    for (let round = 0; round < 2; round++) {
      for (const server of [named, unnamed]) {
        log(`${name} on ${server.name}, run ${round + 1}`);
        const result = await load(`${server.baseUrl}${path}`, key, seconds, connections);
        const figures = done[server.name as 'named' | 'unnamed'];
        figures.ok += result.statusCodeStats['200']?.count ?? 0;
        figures.bad += result.non2xx + result.errors;
        figures.seconds += result.duration; // autocannon gives it in seconds
        figures.p99 = Math.max(figures.p99, result.latency.p99);
      }
    }
    const rate = (figures: { ok: number; seconds: number }) => figures.ok / figures.seconds;
    rows.push([name, thousands(rate(done.named)), thousands(rate(done.unnamed)), fixed(rate(done.named) / rate(done.unnamed), 2), `${done.named.p99} / ${done.unnamed.p99}`, String(done.named.bad + done.unnamed.bad)]);
    summary.push(`${name}: named statements at ${fixed(rate(done.named) / rate(done.unnamed), 2)} × unnamed req/s`);
  }
  await Promise.all([named.stop(), unnamed.stop()]);
  const out = [
    '',
    `PostgreSQL ${version}, ${os.cpus().length} cores, ${connections} connections, ${seconds} s × 2 runs per figure, ${RECORDS} records`,
    `load average at end: ${fixed(os.loadavg()[0]!, 1)}`,
    '',
    formatTable(['load', 'named req/s', 'unnamed req/s', 'named / unnamed', 'p99 ms (named / unnamed)', 'non-2xx'], rows),
    '',
    ...summary,
    '',
  ];
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
