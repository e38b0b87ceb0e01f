/**
 * Benchmark of idle event streams (`npm run bench:events-idle`). A report, never a test: it prints
 * figures and exits 0 even when the target is missed (MISS); 1 only when it could not run.
 *
 * For each engine (SQLite in a fresh data dir, PostgreSQL in a fresh database), Plainbase runs as
 * its own process (`node bin/plainbase.js serve`, worker on). BENCH_IDLE_WORKSPACES workspaces each
 * make BENCH_IDLE_KEYS keys, and each key holds BENCH_IDLE_STREAMS_PER_KEY streams
 * (`GET /v1/events/stream`, each its own connection, held by this process): 10 × 10 × 10 = 1,000
 * by default, the per-process cap. Nothing is written. Once the server is quiet again, its CPU
 * time (user + system, /proc) is read over BENCH_IDLE_SECONDS: that is what holding the streams
 * costs (heartbeats, the hub's poll, the credential rechecks), beside the same reading taken
 * before any stream was open (the worker's own polling). Target: under 5 % of a core in all.
 * Env: BENCH_IDLE_WORKSPACES (10), BENCH_IDLE_KEYS (10), BENCH_IDLE_STREAMS_PER_KEY (10),
 * BENCH_IDLE_SECONDS (10), BENCH_ENGINES ("sqlite,postgres"), BENCH_PG_URL.
 */
import { request as httpRequest } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { benchPostgresUrl, createDatabase } from './support/databases.js';
import { callJson, expectStatus } from './support/http.js';
import { loadAverage, readCpuSeconds, readMemory, waitUntilIdle } from './support/memory.js';
import { OWNER_ENV, signInOwner } from './support/owner.js';
import { cleanUpOnSignals, cleanupAll, freePort, isInterrupted, makeTempDir, startServer } from './support/processes.js';
import { benchEngines, wholeNumber } from './support/settings.js';
import { fixed, formatTable } from './support/table.js';

type Engine = 'sqlite' | 'postgres';
const TARGET_SHARE = 0.05;

const settings = {
  workspaces: wholeNumber('BENCH_IDLE_WORKSPACES', 10, 1),
  keys: wholeNumber('BENCH_IDLE_KEYS', 10, 1),
  streamsPerKey: wholeNumber('BENCH_IDLE_STREAMS_PER_KEY', 10, 1),
  seconds: wholeNumber('BENCH_IDLE_SECONDS', 10, 1),
  engines: benchEngines() as Engine[],
  pgUrl: benchPostgresUrl(),
};
const log = (line: string) => {
  if (!isInterrupted()) process.stdout.write(`· ${line}\n`);
};

interface Idle {
  engine: Engine;
  streams: number;
  /** Share of a core the server used, idle, before any stream was open: the worker's and the pool's own polling. */
  baseline: number;
  share: number;
  rssMb: number;
}

/** Opens one stream and holds it, reading (and dropping) what comes; resolves with its closer once it answered 200. */
function hold(base: string, secret: string): Promise<() => void> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(`${base}/v1/events/stream`, { headers: { authorization: `Bearer ${secret}`, accept: 'text/event-stream' } }, (response) => {
      if (response.statusCode !== 200) return reject(new Error(`a stream answered ${response.statusCode}`));
      response.resume();
      resolve(() => request.destroy());
    });
    request.on('error', (error) => {
      if (!isInterrupted()) reject(error);
    });
    request.end();
  });
}

async function idle(engine: Engine): Promise<Idle> {
  const streams = settings.workspaces * settings.keys * settings.streamsPerKey;
  const databaseUrl = engine === 'postgres' ? await createDatabase(settings.pgUrl, 'events_idle') : null;
  const port = await freePort();
  const server = await startServer({
    name: `Plainbase (${engine})`,
    args: ['bin/plainbase.js', 'serve'],
    env: {
      PLAINBASE_HOST: '127.0.0.1',
      PLAINBASE_PORT: String(port),
      PLAINBASE_DATA_DIR: makeTempDir(`plainbase-bench-events-idle-${engine}-`),
      PLAINBASE_DATABASE_URL: databaseUrl ?? '',
      PLAINBASE_LOG_LEVEL: 'warn',
      PLAINBASE_RATE_LIMIT_PER_KEY: '0',
      PLAINBASE_RATE_LIMIT_PER_IP: '0',
      PLAINBASE_STREAMS_PER_CALLER: String(settings.streamsPerKey),
      PLAINBASE_STREAMS_PER_WORKSPACE: String(settings.keys * settings.streamsPerKey),
      PLAINBASE_STREAMS_PER_PROCESS: String(streams),
      ...OWNER_ENV,
    },
    port,
    readyPath: '/readyz',
  });
  const closers: (() => void)[] = [];
  try {
    const session = await signInOwner(server.baseUrl);
    const secrets: string[] = [];
    for (let w = 0; w < settings.workspaces; w++) {
      const workspace = expectStatus(await callJson(server.baseUrl, 'POST', '/v1/workspaces', session, { name: `idle ${w}` }), 201, 'creating a workspace');
      const inWorkspace = { ...session, 'x-baas-workspace': (workspace.body as { id: string }).id };
      for (let k = 0; k < settings.keys; k++) {
        const key = expectStatus(await callJson(server.baseUrl, 'POST', '/v1/keys', inWorkspace, { name: `idle ${k}`, scopes: ['records:read'] }), 201, 'creating a key');
        secrets.push((key.body as { secret: string }).secret);
      }
    }
    const baseline = await cpuShare(server.pid);
    log(`${engine}: ${fixed(baseline * 100, 1)} % of a core over ${settings.seconds} s with no stream open`);
    for (const secret of secrets) for (let s = 0; s < settings.streamsPerKey; s++) closers.push(await hold(server.baseUrl, secret));
    log(`${engine}: ${closers.length} streams open over ${settings.workspaces} workspaces × ${settings.keys} keys`);
    const share = await cpuShare(server.pid);
    const rssMb = (readMemory(server.pid)?.rssKb ?? 0) / 1024;
    log(`${engine}: ${fixed(share * 100, 1)} % of a core over ${settings.seconds} s with ${closers.length} idle streams; RSS ${fixed(rssMb, 0)} MB`);
    return { engine, streams: closers.length, baseline, share, rssMb };
  } finally {
    for (const close of closers) close();
    await server.stop();
  }
}

/** The share of a core the server uses over BENCH_IDLE_SECONDS, once work left over from before has settled. */
async function cpuShare(pid: number): Promise<number> {
  await waitUntilIdle(pid, { idleShare: 0.2, quietSeconds: 2, timeoutSeconds: 60 });
  const cpuBefore = readCpuSeconds(pid)!;
  const started = Date.now();
  await sleep(settings.seconds * 1000);
  return (readCpuSeconds(pid)! - cpuBefore) / ((Date.now() - started) / 1000);
}

async function main(): Promise<void> {
  cleanUpOnSignals();
  const header = [
    '# Idle event streams benchmark',
    `settings: BENCH_IDLE_WORKSPACES=${settings.workspaces} BENCH_IDLE_KEYS=${settings.keys} BENCH_IDLE_STREAMS_PER_KEY=${settings.streamsPerKey} BENCH_IDLE_SECONDS=${settings.seconds} BENCH_ENGINES=${settings.engines.join(',')}`,
    `machine: ${(await import('node:os')).cpus().length} cores, load average at start ${fixed(loadAverage(), 1)}; node ${process.version}`,
  ];
  for (const line of header) log(line);
  const results: Idle[] = [];
  const failures: string[] = [];
  for (const engine of settings.engines) {
    if (isInterrupted()) return;
    try {
      results.push(await idle(engine));
    } catch (error) {
      if (isInterrupted()) return;
      failures.push(`${engine}: ${(error as Error).message}`);
      log(`${engine}: FAILED: ${(error as Error).message}`);
    }
  }
  const out = ['', '='.repeat(100), ...header, `load average at end ${fixed(loadAverage(), 1)}`, ''];
  out.push(formatTable(['engine', 'idle streams', 'CPU % of a core, no stream', 'CPU % of a core, streams open', 'RSS MB'], results.map((r) => [r.engine, String(r.streams), fixed(r.baseline * 100, 1), fixed(r.share * 100, 1), fixed(r.rssMb, 0)])));
  out.push('', '## Summary');
  for (const r of results) out.push(`  ${r.share < TARGET_SHARE ? 'PASS' : 'MISS'} ${r.engine}: ${fixed(r.share * 100, 1)} % of a core with ${r.streams} idle streams < ${TARGET_SHARE * 100} % (${fixed(r.baseline * 100, 1)} % with none)`);
  for (const failure of failures) out.push(`FAILED ${failure}`);
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
