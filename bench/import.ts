/**
 * The import phase of `npm run bench:data` on its own (`npm run bench:import`): a few minutes
 * instead of a quarter of an hour, for working on import speed. A report, never a test: exits 0
 * whatever the figures, 1 only when it could not run.
 *
 * For each engine: start Plainbase (`node bin/plainbase.js serve`) in a fresh data dir or a fresh
 * PostgreSQL database, sign in, create the collection `bench` with an index on data.status and an
 * API key, then import BENCH_RECORDS records as one streamed NDJSON body, as bench:data does.
 * Reports records/s on the clock, the server's CPU time (and records per CPU-second, which other
 * work on a shared machine moves less), its peak memory, and then how long the webhook worker
 * took to fan out the import's events, until the database held none pending (the fan-out is
 * partly the database's work, which the server's CPU time does not show).
 *
 * Env: BENCH_RECORDS (1000000), BENCH_ENGINES ("sqlite,postgres"), BENCH_ROUNDS (1: imports into
 * the same collection, one after the other), BENCH_PG_URL (postgres://postgres@127.0.0.1:5432),
 * BENCH_CPU_PROF (a directory: the servers run with --cpu-prof and write their profiles there).
 */
import path from 'node:path';
import { benchPostgresUrl, createDatabase } from './support/databases.js';
import { callJson, expectStatus, streamUpload } from './support/http.js';
import { loadAverage, MemorySampler, readCpuSeconds, waitUntilIdle } from './support/memory.js';
import { waitUntilFannedOut, type BenchDatabase } from './support/outbox.js';
import { OWNER_ENV, signInOwner } from './support/owner.js';
import { cleanUpOnSignals, cleanupAll, freePort, makeTempDir, startServer } from './support/processes.js';
import { ndjsonChunks } from './support/records.js';
import { fixed, thousands } from './support/table.js';
import { benchEngines, wholeNumber } from './support/settings.js';

type Engine = 'sqlite' | 'postgres';
const TARGET_PER_SECOND = 50_000;

const settings = {
  records: wholeNumber('BENCH_RECORDS', 1_000_000, 100),
  rounds: wholeNumber('BENCH_ROUNDS', 1, 1),
  engines: benchEngines(),
  pgUrl: benchPostgresUrl(),
  cpuProfileDir: process.env.BENCH_CPU_PROF ? path.resolve(process.env.BENCH_CPU_PROF) : null,
};
for (const engine of settings.engines) if (engine !== 'sqlite' && engine !== 'postgres') throw new Error(`BENCH_ENGINES: unknown engine "${engine}"`);

async function benchEngine(engine: Engine): Promise<void> {
  const port = await freePort();
  const dataDir = makeTempDir(`plainbase-bench-import-${engine}-`);
  const env: Record<string, string> = {
    PLAINBASE_PORT: String(port),
    PLAINBASE_HOST: '127.0.0.1',
    PLAINBASE_DATA_DIR: dataDir,
    PLAINBASE_LOG_LEVEL: 'warn',
    PLAINBASE_RATE_LIMIT_PER_KEY: '0',
    PLAINBASE_RATE_LIMIT_PER_IP: '0',
    ...OWNER_ENV,
    PLAINBASE_DATABASE_URL: engine === 'postgres' ? await createDatabase(settings.pgUrl, 'import') : '',
  };
  const profile = settings.cpuProfileDir ? ['--cpu-prof', `--cpu-prof-dir=${path.join(settings.cpuProfileDir, engine)}`] : [];
  const server = await startServer({ name: `Plainbase (${engine})`, args: [...profile, 'bin/plainbase.js', 'serve'], env, port, readyPath: '/readyz' });
  const sampler = new MemorySampler(server.pid).start();
  try {
    const session = await signInOwner(server.baseUrl);
    expectStatus(await callJson(server.baseUrl, 'POST', '/v1/collections', session, { name: 'bench' }), 201, 'creating the collection');
    expectStatus(await callJson(server.baseUrl, 'POST', '/v1/collections/bench/indexes', session, { name: 'status', fields: ['data.status'] }), 201, 'creating the index');
    const key = expectStatus(await callJson(server.baseUrl, 'POST', '/v1/keys', session, { name: 'bench', scopes: ['records:create'] }), 201, 'creating a key');
    const headers = { authorization: `Bearer ${(key.body as { secret: string }).secret}`, 'content-type': 'application/x-ndjson' };

    for (let round = 1; round <= settings.rounds; round++) {
      sampler.setPhase(`import ${round}`);
      const cpuBefore = readCpuSeconds(server.pid) ?? Number.NaN;
      const upload = await streamUpload({ url: `${server.baseUrl}/v1/collections/bench/import`, headers, chunks: () => ndjsonChunks(settings.records) });
      const cpu = (readCpuSeconds(server.pid) ?? Number.NaN) - cpuBefore;
      const perSecond = settings.records / upload.seconds;
      const ok = upload.status === 200;
      console.log(
        `${engine} import ${round}: HTTP ${upload.status}, ${thousands(settings.records)} records in ${fixed(upload.seconds, 1)} s = ${thousands(perSecond)} records/s` +
          ` (target ≥ ${thousands(TARGET_PER_SECOND)}: ${ok && perSecond >= TARGET_PER_SECOND ? 'PASS' : 'MISS'}); server CPU ${fixed(cpu, 1)} s = ${thousands(settings.records / cpu)} records per CPU-second; load ${fixed(loadAverage(), 1)}`,
      );
      if (!ok) console.log(`  answer: ${upload.body.slice(0, 300)}`);
      sampler.setPhase(`fan-out ${round}`);
      const cpuBeforeFanOut = readCpuSeconds(server.pid) ?? Number.NaN;
      const database: BenchDatabase = engine === 'postgres' ? { engine, url: env.PLAINBASE_DATABASE_URL! } : { engine, dataDir };
      const fannedOut = await waitUntilFannedOut(database);
      const fanOutCpu = (readCpuSeconds(server.pid) ?? Number.NaN) - cpuBeforeFanOut;
      console.log(
        `  then the webhook worker's fan-out of its events: ${fixed(fannedOut.seconds, 1)} s until none was pending in the database` +
          `${fannedOut.timedOut ? ' (some still were when the wait timed out)' : ''}, server CPU ${fixed(fanOutCpu, 1)} s`,
      );
      // Anything else the import left behind, before the next round is measured.
      await waitUntilIdle(server.pid);
    }
    const memory = sampler.stop();
    const byPhase = [...memory.maxRssMbByPhase].map(([phase, mb]) => `${phase} ${Math.round(mb)}`).join(', ');
    console.log(`  server memory: peak VmHWM ${Math.round(memory.peakHwmMb)} MB (target < 400 MB: ${memory.peakHwmMb < 400 ? 'PASS' : 'MISS'}); max VmRSS by phase, MB: ${byPhase}`);
  } finally {
    sampler.stop();
    await server.stop();
  }
}

cleanUpOnSignals();
try {
  console.log(`settings: BENCH_RECORDS=${settings.records} BENCH_ROUNDS=${settings.rounds} BENCH_ENGINES=${settings.engines.join(',')}; load ${fixed(loadAverage(), 1)}`);
  for (const engine of settings.engines) await benchEngine(engine);
} catch (error) {
  console.error(error);
  process.exitCode = 1;
} finally {
  await cleanupAll();
}
