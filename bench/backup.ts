/**
 * Writes while a backup runs (`npm run bench:backup`): record creates per second over HTTP, from
 * several clients, first with no backup and then while the service takes backups one after the
 * other (POST /v1/backups again as soon as the last one finished), alternating the two, on each
 * engine in the same run. Prints the ratio (target ≥ 0.7) and how long a backup of the data takes on an idle
 * server. A report, never a test: exits 0 whatever the figures, 1 only when it could not run.
 *
 * For each engine: start Plainbase (`node bin/plainbase.js serve`) in a fresh data folder or a
 * fresh PostgreSQL database, import BENCH_RECORDS records and upload BENCH_FILES files of
 * BENCH_FILE_KIB KiB, then measure.
 *
 * Env: BENCH_RECORDS (200000), BENCH_FILES (20), BENCH_FILE_KIB (1024), BENCH_CONNECTIONS (8),
 * BENCH_SECONDS (10: each measure), BENCH_ROUNDS (3: measures without and during, alternated), BENCH_ENGINES ("sqlite,postgres"), BENCH_PG_URL (postgres://postgres@127.0.0.1:5432).
 */
import { benchPostgresUrl, createDatabase } from './support/databases.js';
import { callJson, expectStatus, inParallel, streamUpload } from './support/http.js';
import { measure, type LoadResult } from './support/load.js';
import { loadAverage, waitUntilIdle } from './support/memory.js';
import { OWNER_ENV, signInOwner, type Session } from './support/owner.js';
import { cleanUpOnSignals, cleanupAll, freePort, makeTempDir, startServer } from './support/processes.js';
import { createBody, ndjsonChunks } from './support/records.js';
import { benchEngines, wholeNumber } from './support/settings.js';
import { fixed, thousands } from './support/table.js';

type Engine = 'sqlite' | 'postgres';
const TARGET_RATIO = 0.7;

const settings = {
  records: wholeNumber('BENCH_RECORDS', 200_000, 100),
  files: wholeNumber('BENCH_FILES', 20, 0),
  fileKib: wholeNumber('BENCH_FILE_KIB', 1024, 1),
  connections: wholeNumber('BENCH_CONNECTIONS', 8, 1),
  seconds: wholeNumber('BENCH_SECONDS', 10, 1),
  rounds: wholeNumber('BENCH_ROUNDS', 3, 1),
  engines: benchEngines(),
  pgUrl: benchPostgresUrl(),
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits until GET /v1/backups lists `name`; the seconds it took. */
async function waitForBackup(baseUrl: string, session: Session, name: string, startedAt: number): Promise<number> {
  for (;;) {
    const listed = expectStatus(await callJson<{ data: { name: string }[] }>(baseUrl, 'GET', '/v1/backups', session), 200, 'listing backups');
    if (listed.body.data.some((backup) => backup.name === name)) return (performance.now() - startedAt) / 1000;
    await sleep(100);
  }
}

/** Keeps a backup running until `stop` is set: starts the next one as soon as the last is done. */
async function backupsUntil(baseUrl: string, session: Session, stop: { done: boolean }): Promise<{ started: number; refused: number; lastName: string | null }> {
  let started = 0;
  let refused = 0;
  let lastName: string | null = null;
  while (!stop.done) {
    const reply = await callJson<{ name: string }>(baseUrl, 'POST', '/v1/backups', session, {});
    if (reply.status === 202) {
      started += 1;
      lastName = reply.body.name;
    } else if (reply.status === 409) refused += 1;
    else throw new Error(`starting a backup: ${reply.status} ${JSON.stringify(reply.body).slice(0, 300)}`);
    await sleep(100);
  }
  return { started, refused, lastName };
}

const line = (label: string, result: LoadResult) =>
  `${label}: ${thousands(result.reqPerSec)} creates/s, p50 ${fixed(result.p50, 1)} ms, p99 ${fixed(result.p99, 1)} ms, non-2xx ${result.non2xx}, errors ${result.errors}, server CPU ${fixed(result.serverCpuShare, 2)} cores, load ${fixed(result.loadAverage, 1)}`;

async function benchEngine(engine: Engine): Promise<void> {
  const port = await freePort();
  const dataDir = makeTempDir(`plainbase-bench-backup-${engine}-`);
  const env: Record<string, string> = {
    PLAINBASE_PORT: String(port),
    PLAINBASE_HOST: '127.0.0.1',
    PLAINBASE_DATA_DIR: dataDir,
    PLAINBASE_LOG_LEVEL: 'warn',
    PLAINBASE_RATE_LIMIT_PER_KEY: '0',
    PLAINBASE_RATE_LIMIT_PER_IP: '0',
    PLAINBASE_BACKUP_KEEP: '2',
    ...OWNER_ENV,
    PLAINBASE_DATABASE_URL: engine === 'postgres' ? await createDatabase(settings.pgUrl, 'backup') : '',
  };
  const server = await startServer({ name: `Plainbase (${engine})`, args: ['bin/plainbase.js', 'serve'], env, port, readyPath: '/readyz' });
  try {
    const { baseUrl } = server;
    const session = await signInOwner(baseUrl);
    expectStatus(await callJson(baseUrl, 'POST', '/v1/collections', session, { name: 'bench' }), 201, 'creating the collection');
    const key = expectStatus(await callJson(baseUrl, 'POST', '/v1/keys', session, { name: 'bench', scopes: ['records:create', 'files:write'] }), 201, 'creating a key');
    const secret = (key.body as { secret: string }).secret;

    const imported = await streamUpload({
      url: `${baseUrl}/v1/collections/bench/import`,
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/x-ndjson' },
      chunks: () => ndjsonChunks(settings.records),
    });
    if (imported.status !== 200) throw new Error(`import: ${imported.status} ${imported.body.slice(0, 300)}`);
    const content = Buffer.alloc(settings.fileKib * 1024, 0x5a);
    await inParallel(settings.files, 4, async (i) => {
      const response = await fetch(`${baseUrl}/v1/collections/bench/files?name=file-${i}.bin`, { method: 'POST', headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/octet-stream' }, body: content });
      if (response.status !== 201) throw new Error(`upload: ${response.status} ${await response.text()}`);
    });
    await waitUntilIdle(server.pid);

    // One backup on an idle server: how long the data takes.
    const idleStart = performance.now();
    const first = expectStatus(await callJson<{ name: string }>(baseUrl, 'POST', '/v1/backups', session, {}), 202, 'starting a backup');
    const idleSeconds = await waitForBackup(baseUrl, session, first.body.name, idleStart);
    const listed = expectStatus(await callJson<{ data: { name: string; size: number }[] }>(baseUrl, 'GET', '/v1/backups', session), 200, 'listing backups');
    const size = listed.body.data.find((backup) => backup.name === first.body.name)!.size;
    console.log(`${engine}: ${thousands(settings.records)} records and ${settings.files} files of ${settings.fileKib} KiB; one backup on an idle server: ${fixed(idleSeconds, 1)} s, ${fixed(size / 1024 / 1024, 1)} MiB`);
    await waitUntilIdle(server.pid);

    const load = {
      url: baseUrl,
      connections: settings.connections,
      seconds: settings.seconds,
      method: 'POST' as const,
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
      path: '/v1/collections/bench/records',
      body: createBody,
      serverPid: server.pid,
    };
    // Alternated, so that the other work of a shared machine falls on both sides alike.
    await measure({ ...load, seconds: 3, warmupSeconds: 0 });
    const totals = { without: 0, during: 0 };
    for (let round = 1; round <= settings.rounds; round++) {
      const without = await measure({ ...load, warmupSeconds: 0 });
      console.log(`  round ${round} ${line('no backup     ', without)}`);
      const stop = { done: false };
      const backups = backupsUntil(baseUrl, session, stop);
      const during = await measure({ ...load, warmupSeconds: 0 });
      stop.done = true;
      const { started, lastName } = await backups;
      console.log(`  round ${round} ${line('during backups', during)}; ${started} backup(s) started in the ${settings.seconds} s`);
      // The last backup finishes before the next measure without one.
      if (lastName) await waitForBackup(baseUrl, session, lastName, performance.now());
      totals.without += without.ok;
      totals.during += during.ok;
    }
    const ratio = totals.during / totals.without;
    console.log(`  ${engine}: creates during backups / without, over ${settings.rounds} round(s): ${fixed(ratio, 2)} (target ≥ ${TARGET_RATIO}: ${ratio >= TARGET_RATIO ? 'PASS' : 'MISS'})`);
  } finally {
    await server.stop();
  }
}

cleanUpOnSignals();
try {
  console.log(`settings: BENCH_RECORDS=${settings.records} BENCH_FILES=${settings.files} BENCH_FILE_KIB=${settings.fileKib} BENCH_CONNECTIONS=${settings.connections} BENCH_SECONDS=${settings.seconds} BENCH_ROUNDS=${settings.rounds} BENCH_ENGINES=${settings.engines.join(',')}; load ${fixed(loadAverage(), 1)}`);
  for (const engine of settings.engines) await benchEngine(engine);
} catch (error) {
  console.error(error);
  process.exitCode = 1;
} finally {
  await cleanupAll();
}
