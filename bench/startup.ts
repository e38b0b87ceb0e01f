/**
 * How long the service takes to start and how much memory it holds when idle
 * (`npm run bench:startup`). A report, never a test: it prints figures and exits 0 even when a
 * target is missed (printed as MISS); it exits 1 only when it could not run at all.
 *
 * Each run, for each engine: a fresh data dir (and for PostgreSQL a fresh database), then
 * 1. first start: `node bin/plainbase.js serve` as its own process, as `npm start` runs it; the
 *    clock runs from the spawn until GET /healthz answers 200 (asked every 10 ms). This start
 *    migrates the empty database and makes a setup link, as a new install does.
 * 2. idle: no request; VmRSS from /proc/<pid>/status 1 s after healthy (just started) and after
 *    BENCH_IDLE_SECONDS (idle: what a quiet server holds, webhook worker running, after the
 *    idle trim of src/idle-memory.ts, which acts at the first quiet 10-s check). Then SIGTERM.
 * 3. restart: the same again on the now migrated database: what an upgrade or a crash costs.
 * Server CPU time (user + system, from /proc/<pid>/stat) until healthy is printed beside the
 * clock time: other work on a shared machine moves it less.
 *
 * Env: BENCH_RUNS (5), BENCH_ENGINES ("sqlite,postgres"), BENCH_IDLE_SECONDS (30),
 * BENCH_PG_URL (postgres://postgres@127.0.0.1:5432), BENCH_SERVE_ARGS (the node arguments,
 * "bin/plainbase.js serve"; "--import tsx src/cli.ts serve" times the TypeScript sources),
 * BENCH_CPU_PROF (a directory: the servers run with --cpu-prof and write their profiles there,
 * one folder per engine and start, for bench/support/profile-summary.ts).
 */
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { benchPostgresUrl, createDatabase, postgresVersion } from './support/databases.js';
import { loadAverage, readCpuSeconds, readMemory } from './support/memory.js';
import { cleanUpOnSignals, cleanupAll, freePort, makeTempDir, startServer } from './support/processes.js';
import { benchEngines, wholeNumber } from './support/settings.js';
import { fixed, formatTable } from './support/table.js';

type Engine = 'sqlite' | 'postgres';
type Start = 'first start' | 'restart';

/** The targets: start to healthy and idle memory. */
const TARGET_HEALTHY_SECONDS = 1.5;
const TARGET_IDLE_RSS_MB = 100;

function readSettings() {
  const engines = benchEngines();
  return {
    runs: wholeNumber('BENCH_RUNS', 5, 1),
    idleSeconds: wholeNumber('BENCH_IDLE_SECONDS', 30, 1),
    engines: engines as Engine[],
    pgUrl: benchPostgresUrl(),
    serveArgs: (process.env.BENCH_SERVE_ARGS ?? 'bin/plainbase.js serve').split(' ').filter(Boolean),
    cpuProfileDir: process.env.BENCH_CPU_PROF ? path.resolve(process.env.BENCH_CPU_PROF) : null,
  };
}
type Settings = ReturnType<typeof readSettings>;

interface Measured {
  healthySeconds: number;
  cpuSeconds: number;
  startedRssMb: number;
  idleRssMb: number;
  peakMb: number;
}

const log = (line: string) => process.stderr.write(`${line}\n`);

/** Starts the service on `env`'s data, times it to healthy, lets it idle, reads its memory, stops it. */
async function startOnce(engine: Engine, start: Start, run: number, env: Record<string, string>, settings: Settings): Promise<Measured> {
  const port = await freePort();
  const profileDir = settings.cpuProfileDir ? path.join(settings.cpuProfileDir, engine, `${start.replace(' ', '-')}-${run}`) : null;
  const profile = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [];
  const server = await startServer({
    name: `Plainbase (${engine}, ${start})`,
    args: [...profile, ...settings.serveArgs],
    env: { ...env, PLAINBASE_PORT: String(port) },
    port,
    readyPath: '/healthz',
    readyTimeoutMs: 60_000,
    pollMs: 10,
  });
  try {
    const healthySeconds = (Date.now() - server.startedAt) / 1000;
    const cpuSeconds = readCpuSeconds(server.pid) ?? Number.NaN;
    const memoryAfter = (seconds: number) => {
      const memory = readMemory(server.pid);
      if (!memory) throw new Error(`${server.name} exited within ${seconds} s of being healthy:\n${server.output()}`);
      return memory;
    };
    await sleep(1000);
    const started = memoryAfter(1);
    await sleep((settings.idleSeconds - 1) * 1000);
    const idle = memoryAfter(settings.idleSeconds);
    return { healthySeconds, cpuSeconds, startedRssMb: started.rssKb / 1024, idleRssMb: idle.rssKb / 1024, peakMb: idle.hwmKb / 1024 };
  } finally {
    await server.stop();
  }
}

async function benchEngine(engine: Engine, settings: Settings): Promise<Map<Start, Measured[]>> {
  const results = new Map<Start, Measured[]>([
    ['first start', []],
    ['restart', []],
  ]);
  for (let run = 1; run <= settings.runs; run++) {
    const env: Record<string, string> = {
      PLAINBASE_HOST: '127.0.0.1',
      PLAINBASE_DATA_DIR: makeTempDir(`plainbase-bench-startup-${engine}-`),
      PLAINBASE_LOG_LEVEL: 'warn',
      // Empty means "not set" to Plainbase: SQLite in the data dir, whatever the caller's env says.
      PLAINBASE_DATABASE_URL: engine === 'postgres' ? await createDatabase(settings.pgUrl, 'startup') : '',
    };
    for (const start of results.keys()) {
      const measured = await startOnce(engine, start, run, env, settings);
      results.get(start)!.push(measured);
      log(
        `${engine} run ${run} ${start}: healthy in ${fixed(measured.healthySeconds, 2)} s (server CPU ${fixed(measured.cpuSeconds, 2)} s), ` +
          `RSS ${fixed(measured.startedRssMb, 0)} MB 1 s later, ${fixed(measured.idleRssMb, 0)} MB idle, peak ${fixed(measured.peakMb, 0)} MB; load ${fixed(loadAverage(), 1)}`,
      );
    }
  }
  return results;
}

/** Median, min and max: the median is the figure; min and max show how noisy the machine was. */
function spread(values: number[], digits: number): string {
  const sorted = [...values].sort((a, b) => a - b);
  return `${fixed(median(sorted), digits)} (${fixed(sorted[0]!, digits)}–${fixed(sorted.at(-1)!, digits)})`;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length % 2 === 1 ? sorted[(sorted.length - 1) / 2]! : (sorted[sorted.length / 2 - 1]! + sorted[sorted.length / 2]!) / 2;
}

async function main(): Promise<void> {
  const settings = readSettings();
  cleanUpOnSignals();
  if (settings.engines.includes('postgres')) {
    const version = await postgresVersion(settings.pgUrl);
    if (version instanceof Error) throw new Error(`PostgreSQL at ${settings.pgUrl} cannot be reached (${version.message}); run with BENCH_ENGINES=sqlite to skip it`);
    log(`PostgreSQL ${version}`);
  }
  log(`settings: BENCH_RUNS=${settings.runs} BENCH_IDLE_SECONDS=${settings.idleSeconds} BENCH_ENGINES=${settings.engines.join(',')} command: node ${settings.serveArgs.join(' ')}`);

  const rows: string[][] = [];
  const verdicts: string[] = [];
  for (const engine of settings.engines) {
    for (const [start, measured] of await benchEngine(engine, settings)) {
      const healthy = measured.map((m) => m.healthySeconds);
      const rss = measured.map((m) => m.idleRssMb);
      rows.push([
        `${engine}, ${start}`,
        spread(healthy, 2),
        spread(measured.map((m) => m.cpuSeconds), 2),
        spread(measured.map((m) => m.startedRssMb), 0),
        spread(rss, 0),
        spread(measured.map((m) => m.peakMb), 0),
      ]);
      const verdict = (pass: boolean) => (pass ? 'PASS' : 'MISS');
      verdicts.push(
        `${engine}, ${start}: healthy ${fixed(median(healthy), 2)} s (target < ${TARGET_HEALTHY_SECONDS} s: ${verdict(median(healthy) < TARGET_HEALTHY_SECONDS)}), ` +
          `idle RSS ${fixed(median(rss), 0)} MB (target < ${TARGET_IDLE_RSS_MB} MB: ${verdict(median(rss) < TARGET_IDLE_RSS_MB)})`,
      );
    }
  }
  console.log(`\nnode ${settings.serveArgs.join(' ')}: median (min–max) of ${settings.runs} run(s); load ${fixed(loadAverage(), 1)}\n`);
  console.log(formatTable(['engine, start', 'to healthy, s', 'server CPU, s', 'RSS at 1 s, MB', `idle RSS at ${settings.idleSeconds} s, MB`, 'peak RSS, MB'], rows));
  console.log(`\n${verdicts.join('\n')}`);
}

try {
  await main();
} catch (error) {
  console.error(error);
  process.exitCode = 1;
} finally {
  await cleanupAll();
}
