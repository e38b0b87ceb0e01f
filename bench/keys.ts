/**
 * Benchmark of API-key authentication (`npm run bench:keys`). A report, never a test: it prints
 * figures and exits 0 even when a target is missed (misses are printed as MISS).
 *
 * For each engine (SQLite, then PostgreSQL on a fresh database) Plainbase runs as its own process
 * (`node bin/plainbase.js serve`); the bench signs in, creates a key, and loads the server with
 * autocannon from this process:
 * - `GET /healthz`: the trivial unauthenticated route, the ceiling of the HTTP stack;
 * - `GET /v1/me` with the key: a full key authentication (lookup by kid, hash, constant-time
 *   compare, role behind the key) and a small JSON answer;
 * - `GET /v1/me` with a garbage token whose checksum fails: refused (401) before any database
 *   work (test/keys.test.ts proves that no query runs for it).
 * Each load: BENCH_WARMUP_SECONDS of warm-up (discarded), then BENCH_SECONDS measured.
 * Targets (SQLite): me / healthz ≥ 0.85 in req/s, and p99 of me < 5 ms.
 *
 * Env: BENCH_SECONDS (10), BENCH_WARMUP_SECONDS (2), BENCH_CONNECTIONS (50),
 * BENCH_ENGINES ("sqlite,postgres"), BENCH_PG_URL (postgres://postgres@127.0.0.1:5432).
 * BENCH_LOG_LEVEL (info, the default of the product: one line per request).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import autocannon, { type Options, type Result } from 'autocannon';
import { benchPostgresUrl, createDatabase, postgresVersion } from './support/databases.js';
import { callJson, expectStatus } from './support/http.js';
import { OWNER_ENV, signInOwner } from './support/owner.js';
import { cleanUpOnSignals, cleanupAll, freePort, makeTempDir, startServer } from './support/processes.js';
import { fixed, formatTable, thousands } from './support/table.js';
import { benchEngines, benchLogLevel, wholeNumber } from './support/settings.js';

type Engine = 'sqlite' | 'postgres';
const TARGET = { ratio: 0.85, p99Ms: 5 };

function readSettings() {
  const engines = benchEngines();
  return {
    seconds: wholeNumber('BENCH_SECONDS', 10, 1),
    warmupSeconds: wholeNumber('BENCH_WARMUP_SECONDS', 2, 0),
    connections: wholeNumber('BENCH_CONNECTIONS', 50, 1),
    engines: engines as Engine[],
    pgUrl: benchPostgresUrl(),
  };
}
type Settings = ReturnType<typeof readSettings>;

const log = (line: string) => process.stdout.write(`· ${line}\n`);

/** CPU time (user + system) the process has used so far, in ms, from /proc; null off Linux. */
const CLOCK_TICKS = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();
function cpuMs(pid: number): number | null {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
  } catch {
    return null;
  }
}

interface Load {
  name: string;
  /** Server CPU time per response in µs: less sensitive than req/s to other work on the machine. */
  cpuUsPerReq: number;
  /** Responses with the expected status per second. */
  reqPerSec: number;
  p50: number;
  p99: number;
  expected: number;
  unexpected: number;
  errors: number;
  statusCodes: Record<string, number>;
}

function run(options: Options, onResponse?: (status: number, ms: number) => void): Promise<Result> {
  return new Promise((resolve, reject) => {
    const instance = autocannon(options, (error, result) => (error ? reject(error) : resolve(result)));
    if (onResponse) instance.on('response', (_client: unknown, status: number, _bytes: number, ms: number) => onResponse(status, ms));
  });
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/**
 * Warm-up (discarded), then the measured run. Only responses with `expectedStatus` count towards
 * req/s and the percentiles (401 is the expected answer to a garbage token); latencies are kept
 * per response to the microsecond rather than autocannon's whole-millisecond histogram.
 */
async function measure(name: string, url: string, pid: number, path: string, headers: Record<string, string>, expectedStatus: number, settings: Settings): Promise<Load> {
  const options: Options = { url, connections: settings.connections, timeout: 30, requests: [{ method: 'GET', path, headers }] };
  log(`${name}: ${settings.warmupSeconds} s warm-up + ${settings.seconds} s at ${settings.connections} connections`);
  if (settings.warmupSeconds > 0) await run({ ...options, duration: settings.warmupSeconds });
  let latencies = new Float64Array(1 << 16);
  let expected = 0;
  let unexpected = 0;
  const cpuBefore = cpuMs(pid);
  const result = await run({ ...options, duration: settings.seconds }, (status, ms) => {
    if (status !== expectedStatus) {
      unexpected++;
      return;
    }
    if (expected === latencies.length) {
      const bigger = new Float64Array(latencies.length * 2);
      bigger.set(latencies);
      latencies = bigger;
    }
    latencies[expected++] = ms;
  });
  const cpuAfter = cpuMs(pid);
  const sorted = latencies.subarray(0, expected).sort();
  const statusCodes: Record<string, number> = {};
  for (const [code, { count }] of Object.entries(result.statusCodeStats ?? {})) statusCodes[code] = Number(count);
  const cpuUsPerReq = cpuBefore === null || cpuAfter === null || expected === 0 ? Number.NaN : ((cpuAfter - cpuBefore) * 1000) / (expected + unexpected);
  const load = { name, cpuUsPerReq, reqPerSec: expected / result.duration, p50: percentile(sorted, 50), p99: percentile(sorted, 99), expected, unexpected, errors: result.errors, statusCodes };
  log(`  ${thousands(load.reqPerSec)} req/s, p50 ${fixed(load.p50, 2)} ms, p99 ${fixed(load.p99, 2)} ms, server CPU ${fixed(cpuUsPerReq, 0)} µs/req${unexpected || result.errors ? `, unexpected ${unexpected}, errors ${result.errors} ${JSON.stringify(statusCodes)}` : ''}`);
  return load;
}

interface EngineRun {
  engine: Engine;
  healthz: Load;
  me: Load;
  garbage: Load;
}

async function benchEngine(engine: Engine, settings: Settings): Promise<EngineRun> {
  const dir = makeTempDir(`plainbase-bench-keys-${engine}-`);
  const port = await freePort();
  const env: Record<string, string> = {
    PLAINBASE_PORT: String(port),
    PLAINBASE_HOST: '127.0.0.1',
    PLAINBASE_DATA_DIR: dir,
    PLAINBASE_LOG_LEVEL: benchLogLevel(),
    // On, as in production, so the load pays for counting each key's requests, but too high to refuse.
    PLAINBASE_RATE_LIMIT_PER_KEY: '1000000',
    PLAINBASE_RATE_LIMIT_PER_IP: '0',
    // The garbage-token load is a stream of refused authentications from one address.
    PLAINBASE_AUTH_FAILURES_PER_IP: '0',
    ...OWNER_ENV,
    PLAINBASE_DATABASE_URL: engine === 'postgres' ? await createDatabase(settings.pgUrl, 'keys') : '',
  };
  log(`${engine}: starting Plainbase`);
  const server = await startServer({ name: `Plainbase (${engine})`, args: ['bin/plainbase.js', 'serve'], env, port, readyPath: '/readyz' });
  try {
    const session = await signInOwner(server.baseUrl);
    const created = expectStatus(
      await callJson<{ secret: string }>(server.baseUrl, 'POST', '/v1/keys', session, { name: 'bench', scopes: ['collections:read', 'records:read', 'records:create'] }),
      201,
      'creating the key',
    );
    const secret = created.body.secret;
    const key = { authorization: `Bearer ${secret}` };
    // The same token with its last character changed: well-formed, but the checksum fails.
    const garbage = { authorization: `Bearer ${secret.slice(0, -1)}${secret.endsWith('A') ? 'B' : 'A'}` };
    expectStatus(await callJson(server.baseUrl, 'GET', '/v1/me', key), 200, 'GET /v1/me with the key');
    const refused = expectStatus(await callJson(server.baseUrl, 'GET', '/v1/me', garbage), 401, 'GET /v1/me with a garbage token');
    if ((refused.body as { error?: { code?: string } }).error?.code !== 'INVALID_API_KEY') throw new Error(`garbage token: ${JSON.stringify(refused.body)}`);

    const healthz = await measure(`${engine} GET /healthz`, server.baseUrl, server.pid, '/healthz', {}, 200, settings);
    const me = await measure(`${engine} GET /v1/me (key)`, server.baseUrl, server.pid, '/v1/me', key, 200, settings);
    const bad = await measure(`${engine} GET /v1/me (garbage token)`, server.baseUrl, server.pid, '/v1/me', garbage, 401, settings);
    return { engine, healthz, me, garbage: bad };
  } finally {
    await server.stop();
  }
}

const verdict = (pass: boolean) => (pass ? 'PASS' : 'MISS');

async function main(): Promise<void> {
  cleanUpOnSignals();
  const settings = readSettings();
  const header = [
    `API keys benchmark: ${settings.connections} connections, ${settings.warmupSeconds} s warm-up + ${settings.seconds} s per load`,
    `machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'CPU'}, ${fixed(os.totalmem() / 1024 ** 3, 1)} GB, Node ${process.version}, load average at start ${fixed(os.loadavg()[0]!, 1)}`,
  ];
  let engines = settings.engines;
  if (engines.includes('postgres')) {
    const version = await postgresVersion(settings.pgUrl);
    if (version instanceof Error) {
      header.push(`PostgreSQL: skipped, cannot connect to ${settings.pgUrl}: ${version.message}`);
      engines = engines.filter((engine) => engine !== 'postgres');
    } else {
      header.push(`PostgreSQL ${version} at ${settings.pgUrl}, same machine`);
    }
  }
  process.stdout.write(`${header.join('\n')}\n\n`);

  const runs: EngineRun[] = [];
  for (const engine of engines) {
    try {
      runs.push(await benchEngine(engine, settings));
    } catch (error) {
      log(`${engine}: FAILED: ${(error as Error).message}`);
    }
  }

  const out = ['', ...header, `load average at end: ${fixed(os.loadavg()[0]!, 1)}`, ''];
  const rows: string[][] = [];
  const summary: string[] = [];
  for (const { engine, healthz, me, garbage } of runs) {
    for (const load of [healthz, me, garbage]) {
      rows.push([
        load.name,
        thousands(load.reqPerSec),
        fixed(load.p50, 2),
        fixed(load.p99, 2),
        load === healthz ? '1.00' : fixed(load.reqPerSec / healthz.reqPerSec, 2),
        fixed(load.cpuUsPerReq, 0),
        load === healthz ? '1.00' : fixed(healthz.cpuUsPerReq / load.cpuUsPerReq, 2),
        String(load.unexpected + load.errors),
      ]);
    }
    const ratio = me.reqPerSec / healthz.reqPerSec;
    const bar = engine === 'sqlite' ? '' : ' (targets set for SQLite; shown for reference)';
    summary.push(`${engine}${bar}:`);
    summary.push(`  ${verdict(ratio >= TARGET.ratio)} GET /v1/me with a key at ${fixed(ratio, 2)} × healthz req/s (target ≥ ${TARGET.ratio}); by server CPU per request ${fixed(healthz.cpuUsPerReq / me.cpuUsPerReq, 2)}`);
    summary.push(`  ${verdict(me.p99 < TARGET.p99Ms)} GET /v1/me with a key p99 ${fixed(me.p99, 2)} ms (target < ${TARGET.p99Ms} ms)`);
    summary.push(`  garbage token: ${fixed(garbage.reqPerSec / healthz.reqPerSec, 2)} × healthz req/s, p99 ${fixed(garbage.p99, 2)} ms (no database query: test/keys.test.ts)`);
  }
  out.push(formatTable(['load', 'req/s', 'p50 ms', 'p99 ms', 'ratio', 'CPU µs/req', 'CPU ratio', 'unexpected'], rows));
  out.push('', 'req/s and latencies count responses with the expected status (200; 401 for the garbage token); ratio = req/s over GET /healthz on the same server.');
  out.push('CPU µs/req = server process CPU time (user + system, /proc) per response; CPU ratio = healthz CPU/req over this load\'s: the ratio of req/s the');
  out.push('server would reach if CPU-bound and alone on the machine (a check on the req/s ratio when other work shares the machine).');
  out.push('', ...summary, '');
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
