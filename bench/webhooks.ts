/**
 * Benchmark of webhook delivery (`npm run bench:webhooks`). A report, never a test: it prints
 * figures and exits 0 even when a target is missed (misses are printed as MISS); it exits 1 only
 * when it could not run at all.
 *
 * A receiver runs as its own process (bench/support/receiver-process.ts) on loopback and answers
 * 200 at once. For each engine (SQLite in a fresh data dir, PostgreSQL in a fresh database per
 * scenario), Plainbase runs as its own process (`node bin/plainbase.js serve`):
 *
 * 1. Drain, one webhook: with the worker off (PLAINBASE_WORKER=off), one webhook is registered
 *    and BENCH_EVENTS records are imported (one NDJSON body), which queues BENCH_EVENTS events;
 *    the server stops and starts again with the worker on, and the receiver times how long it
 *    takes until it has every event. deliveries/s = deliveries / (last arrival − the worker's
 *    start, from its "Plainbase is running" log line), so the fan-out (events → deliveries) counts.
 * 2. Drain, ten webhooks: the same with BENCH_WEBHOOKS webhooks and BENCH_EVENTS / BENCH_WEBHOOKS
 *    records, so the same number of deliveries.
 *    After each drain, the baseline: a bare loop in this process POSTs as many bodies of the same
 *    shape, signed the same way (signPayload) with the same headers, to the same receiver with
 *    undici, with as many calls in flight as the worker may have in that scenario: 32 for one
 *    workspace, at most 16 to one webhook, so 16 for one webhook and 32 for ten. ratio = Plainbase
 *    deliveries/s ÷ baseline's. A second loop at 64 in flight is shown too (base@64): what the
 *    receiver takes when nothing caps the calls to it.
 * 3. Latency: the worker on, records created through the API at a steady BENCH_RATE per second
 *    for BENCH_WARMUP_SECONDS (not counted) + BENCH_SECONDS; the receiver takes arrival − the
 *    event's createdAt for each first attempt.
 * 4. Latency beside a hanging neighbour: the same, in workspace B, while workspace A has
 *    HANGING_WEBHOOKS webhooks whose receiver (a server in this process) accepts every call and
 *    never answers, with a backlog of HANGING_BACKLOG events each. A holds its share of the
 *    worker's calls the whole time; B's p50/p99 compare with run 3's, measured alone.
 *
 * Server memory (VmHWM and VmRSS from /proc/<pid>/status) is sampled every 200 ms; server CPU
 * time from /proc/<pid>/stat: on a shared machine, CPU ms per delivery moves less than
 * deliveries/s. Targets (SQLite): ≥ 2,000 deliveries/s, ratio ≥ 0.5, p50 < 50 ms,
 * p99 < 250 ms, memory < 400 MB. PostgreSQL is held to the same bars for reference.
 *
 * Env: BENCH_EVENTS (20000), BENCH_WEBHOOKS (10), BENCH_RATE (200), BENCH_SECONDS (20),
 * BENCH_WARMUP_SECONDS (2: the latency run's first seconds, at the same rate, are not counted),
 * BENCH_ENGINES ("sqlite,postgres"), BENCH_SCENARIOS ("one,many,latency,neighbour": the drain to one webhook,
 * to ten, the latency run alone and beside a hanging neighbour; a comma list runs those only),
 * BENCH_PG_URL (postgres://postgres@127.0.0.1:5432),
 * BENCH_CPU_PROF (a directory: the draining and latency servers run with --cpu-prof and write
 * their profiles and phases.json there, one folder each, for bench/support/profile-summary.ts).
 * Ctrl-C stops every process and removes temp dirs and databases.
 */
import { fork, type ChildProcess } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { Agent, Pool, request } from 'undici';
import { signPayload } from '../src/delivery/sign.js';
import { benchPostgresUrl, createDatabase } from './support/databases.js';
import { callJson, expectStatus, streamUpload } from './support/http.js';
import { loadAverage, MemorySampler, readCpuSeconds, type MemoryReport } from './support/memory.js';
import { OWNER_ENV, signInOwner } from './support/owner.js';
import { cleanUpOnSignals, cleanupAll, freePort, isInterrupted, makeTempDir, onCleanup, startServer, type Server } from './support/processes.js';
import type { FromReceiver, ReceiverStats, ToReceiver } from './support/receiver-process.js';
import { fixed, formatTable, thousands } from './support/table.js';
import { benchEngines, wholeNumber } from './support/settings.js';

type Engine = 'sqlite' | 'postgres';
const SCENARIOS = ['one', 'many', 'latency', 'neighbour'] as const;
type Scenario = (typeof SCENARIOS)[number];

/** BENCH_SCENARIOS: which runs to make, all by default; an unknown one stops the bench. */
function benchScenarios(): Scenario[] {
  const names = (process.env.BENCH_SCENARIOS || SCENARIOS.join(',')).split(',').map((part) => part.trim()).filter(Boolean);
  for (const name of names) if (!(SCENARIOS as readonly string[]).includes(name)) throw new Error(`BENCH_SCENARIOS: unknown scenario "${name}"`);
  return SCENARIOS.filter((scenario) => names.includes(scenario));
}
/** The worker's caps per workspace and per webhook (src/worker/delivery-worker.ts); 1024 in all is never reached here. */
const PER_WORKSPACE = 32;
const PER_WEBHOOK = 16;
/** The uncapped reference loop's calls in flight. */
const UNCAPPED = 64;
const HANGING_WEBHOOKS = 4;
const HANGING_BACKLOG = 100;
const TARGET = { deliveriesPerSecond: 2000, ratio: 0.5, p50Ms: 50, p99Ms: 250, memoryMb: 400, neighbourP99Ms: 1000 };

function readSettings() {
  const engines = benchEngines();
  const settings = {
    events: wholeNumber('BENCH_EVENTS', 20_000, 10),
    webhooks: wholeNumber('BENCH_WEBHOOKS', 10, 2),
    rate: wholeNumber('BENCH_RATE', 200, 1),
    seconds: wholeNumber('BENCH_SECONDS', 20, 1),
    warmupSeconds: wholeNumber('BENCH_WARMUP_SECONDS', 2, 0),
    engines: engines as Engine[],
    scenarios: benchScenarios(),
    pgUrl: benchPostgresUrl(),
    cpuProfileDir: process.env.BENCH_CPU_PROF ? path.resolve(process.env.BENCH_CPU_PROF) : null,
  };
  if (settings.events % settings.webhooks !== 0) throw new Error(`BENCH_EVENTS (${settings.events}) must be a multiple of BENCH_WEBHOOKS (${settings.webhooks})`);
  return settings;
}
type Settings = ReturnType<typeof readSettings>;

const log = (line: string) => {
  if (!isInterrupted()) process.stdout.write(`· ${line}\n`);
};
const verdict = (pass: boolean) => (pass ? 'PASS' : 'MISS');

// ---------------------------------------------------------------------------------------------
// The receiver, in its own process

interface ReceiverHandle {
  url: string;
  /** Clears the counts; events created before `since` (epoch ms) are not counted from now on. */
  reset(since?: number): void;
  stats(): Promise<ReceiverStats>;
  /** Resolves when `count` distinct deliveries have arrived; rejects after `timeoutMs`. */
  waitFor(count: number, timeoutMs: number): Promise<ReceiverStats>;
}

async function startReceiver(): Promise<ReceiverHandle> {
  const child: ChildProcess = fork(path.resolve('bench/support/receiver-process.ts'), [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  onCleanup(`receiver (pid ${child.pid})`, async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    await exited;
  });
  // The receiver may go first: Ctrl-C or a SIGTERM to the process group reaches it too. A message
  // sent then fails with an 'error' event (ERR_IPC_CHANNEL_CLOSED), which would crash the bench
  // before its cleanup; so messages are sent only while the channel is open, and the questions
  // still waiting for an answer fail instead.
  child.on('error', () => undefined);
  const pending = new Map<number, { resolve: (stats: ReceiverStats) => void; reject: (error: Error) => void }>();
  let nextId = 1;
  const post = (message: ToReceiver): boolean => {
    if (!child.connected) return false;
    child.send(message);
    return true;
  };
  const port = await new Promise<number>((resolve, reject) => {
    child.once('exit', (code, signal) => {
      reject(new Error(`the receiver exited during start (${signal ?? code})`));
      for (const question of pending.values()) question.reject(new Error(`the receiver exited (${signal ?? code})`));
      pending.clear();
    });
    child.on('message', (message: FromReceiver) => {
      if (message.type === 'ready') resolve(message.port);
      else pending.get(message.id)?.resolve(message.stats);
    });
  });
  const ask = (message: { type: 'stats' } | { type: 'waitFor'; count: number }, timeoutMs = 10_000) => {
    const id = nextId++;
    return new Promise<ReceiverStats>((resolve, reject) => {
      const timer = setTimeout(() => {
        pending.delete(id);
        reject(new Error(`the receiver did not answer ${message.type} within ${timeoutMs} ms`));
      }, timeoutMs);
      const settle = () => {
        clearTimeout(timer);
        pending.delete(id);
      };
      pending.set(id, {
        resolve: (stats) => {
          settle();
          resolve(stats);
        },
        reject: (error) => {
          settle();
          reject(error);
        },
      });
      if (!post({ ...message, id } as ToReceiver)) pending.get(id)!.reject(new Error('the receiver has gone'));
    });
  };
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    reset: (since) => void post({ type: 'reset', since }),
    stats: () => ask({ type: 'stats' }),
    waitFor: (count, timeoutMs) => ask({ type: 'waitFor', count }, timeoutMs),
  };
}

// ---------------------------------------------------------------------------------------------
// Plainbase

interface Place {
  env: Record<string, string>;
}

/** A fresh data dir and, for PostgreSQL, a fresh database, both removed at the end. */
async function freshPlace(engine: Engine, settings: Settings): Promise<Place> {
  const env: Record<string, string> = {
    PLAINBASE_HOST: '127.0.0.1',
    PLAINBASE_DATA_DIR: makeTempDir(`plainbase-bench-webhooks-${engine}-`),
    PLAINBASE_ENV: 'development',
    PLAINBASE_WEBHOOK_ALLOW_PRIVATE: '1',
    PLAINBASE_LOG_LEVEL: 'warn',
    PLAINBASE_RATE_LIMIT_PER_KEY: '0',
    PLAINBASE_RATE_LIMIT_PER_IP: '0',
    ...OWNER_ENV,
    // Empty means "not set" to Plainbase: SQLite in the data dir, whatever the caller's env says.
    PLAINBASE_DATABASE_URL: '',
  };
  if (engine === 'postgres') env.PLAINBASE_DATABASE_URL = await createDatabase(settings.pgUrl, 'webhooks');
  return { env };
}

/**
 * A PostgreSQL with autovacuum off never gathers planner statistics: on a table of 20,000
 * never-analyzed rows the planner takes the due-deliveries query for a handful of rows and sorts
 * them all at every claim (~30 ms instead of ~0.3 ms). Autovacuum analyzes a table that changed
 * that much within a minute or so; where it is off, the bench runs that ANALYZE itself (in a
 * drain when the first delivery arrives, the queued events being fanned out by then; in the
 * latency run after the warm-up), and says so.
 */
async function analyzeIfNoAutovacuum(databaseUrl: string, label: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ autovacuum: string }>('show autovacuum');
    if (rows[0]?.autovacuum === 'on') return;
    await client.query('analyze');
    log(`${label}: autovacuum is off on this PostgreSQL: ran ANALYZE, as autovacuum would have`);
  } finally {
    await client.end();
  }
}

async function startPlainbase(engine: Engine, place: Place, worker: boolean, profileDir: string | null, logLevel = 'warn'): Promise<Server> {
  const port = await freePort();
  const profile = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [];
  return startServer({
    name: `Plainbase (${engine}, worker ${worker ? 'on' : 'off'})`,
    args: [...profile, 'bin/plainbase.js', 'serve'],
    env: { ...place.env, PLAINBASE_PORT: String(port), PLAINBASE_WORKER: worker ? 'on' : 'off', PLAINBASE_LOG_LEVEL: logLevel },
    port,
    readyPath: '/readyz',
  });
}

/**
 * When the worker started: the time of the "Plainbase is running" log line, written right after
 * the worker starts (info level). The bench sees /readyz answer up to ~0.1 s later.
 */
async function workerStartedAt(server: Server): Promise<number | null> {
  const deadline = Date.now() + 5000;
  while (Date.now() < deadline) {
    for (const line of server.output().split('\n')) {
      if (!line.includes('Plainbase is running')) continue;
      try {
        return (JSON.parse(line) as { time: number }).time;
      } catch {
        return null;
      }
    }
    await sleep(20); // the line may still be in the pipe
  }
  return null;
}

/** A collection and `count` webhooks on it for record.created; returns the webhooks' secrets. */
async function setUpWebhooks(server: Server, session: Record<string, string>, receiverUrl: string, count: number): Promise<string[]> {
  expectStatus(await callJson(server.baseUrl, 'POST', '/v1/collections', session, { name: 'bench' }), 201, 'creating the collection');
  const secrets: string[] = [];
  for (let i = 0; i < count; i++) {
    const created = expectStatus(await callJson(server.baseUrl, 'POST', '/v1/webhooks', session, { url: `${receiverUrl}/${i}`, events: ['record.created'] }), 201, 'creating a webhook');
    secrets.push((created.body as { secret: string }).secret);
  }
  return secrets;
}

function* ndjson(count: number): Generator<string> {
  for (let start = 0; start < count; start += 1000) {
    let chunk = '';
    for (let i = start; i < Math.min(count, start + 1000); i++) chunk += `{"n":${i},"name":"record ${i} of the webhook benchmark"}\n`;
    yield chunk;
  }
}

// ---------------------------------------------------------------------------------------------
// Drains

interface Drain {
  engine: Engine;
  webhooks: number;
  deliveries: number;
  /** From the worker's start (its log line) to the last first arrival. */
  seconds: number;
  perSecond: number;
  /** From ready to the first arrival: mostly the fan-out of the queued events. */
  firstArrivalSeconds: number;
  calls: number;
  cpuMsPerDelivery: number;
  memory: MemoryReport;
  /** At the worker's concurrency for this scenario. */
  baseline: Baseline;
  /** At 64 in flight, uncapped; null when that is the baseline already. */
  baselineAt64: Baseline | null;
}

async function drain(engine: Engine, webhookCount: number, settings: Settings, receiver: ReceiverHandle): Promise<Drain> {
  const label = `${engine}, ${webhookCount} webhook${webhookCount > 1 ? 's' : ''}`;
  const records = settings.events / webhookCount;
  const place = await freshPlace(engine, settings);

  log(`${label}: queueing ${thousands(records)} records × ${webhookCount} webhook(s) with the worker off`);
  const queuer = await startPlainbase(engine, place, false, null);
  let secrets: string[];
  try {
    const session = await signInOwner(queuer.baseUrl);
    secrets = await setUpWebhooks(queuer, session, receiver.url, webhookCount);
    const upload = await streamUpload({
      url: `${queuer.baseUrl}/v1/collections/bench/import`,
      headers: { ...session, 'content-type': 'application/x-ndjson' },
      chunks: () => ndjson(records),
    });
    if (upload.status !== 200 || (JSON.parse(upload.body) as { imported: number }).imported !== records) {
      throw new Error(`import answered ${upload.status} ${upload.body.slice(0, 300)}`);
    }
    log(`${label}: imported in ${fixed(upload.seconds, 1)} s`);
  } finally {
    await queuer.stop();
  }

  receiver.reset();
  const profileDir = settings.cpuProfileDir ? path.join(settings.cpuProfileDir, `${engine}-${webhookCount}`) : null;
  // Info level for the "running" line; nothing else logs at info during a drain but /readyz.
  const server = await startPlainbase(engine, place, true, profileDir, 'info');
  const readyAt = (await workerStartedAt(server)) ?? performance.timeOrigin + performance.now();
  const sampler = new MemorySampler(server.pid).start();
  const cpuBefore = readCpuSeconds(server.pid) ?? Number.NaN;
  let stats: ReceiverStats;
  let memory: MemoryReport;
  let cpuSeconds: number;
  try {
    if (engine === 'postgres') {
      // The worker fans every queued event out before its first claim: the deliveries exist now.
      await receiver.waitFor(1, 600_000);
      await analyzeIfNoAutovacuum(place.env.PLAINBASE_DATABASE_URL!, label);
    }
    stats = await receiver.waitFor(settings.events, 600_000);
    cpuSeconds = (readCpuSeconds(server.pid) ?? Number.NaN) - cpuBefore;
  } finally {
    memory = sampler.stop();
    await server.stop();
  }
  const seconds = (stats.lastArrival! - readyAt) / 1000;
  if (profileDir) {
    // For bench/support/profile-summary.ts: the drain's window, in ms from the process's spawn.
    const window = { phase: 'drain', from: readyAt - server.startedAt, to: stats.lastArrival! - server.startedAt };
    fs.mkdirSync(profileDir, { recursive: true });
    fs.writeFileSync(path.join(profileDir, 'phases.json'), JSON.stringify([window]));
  }
  const result = {
    engine,
    webhooks: webhookCount,
    deliveries: settings.events,
    seconds,
    perSecond: settings.events / seconds,
    firstArrivalSeconds: (stats.firstArrival! - readyAt) / 1000,
    calls: stats.calls,
    cpuMsPerDelivery: (cpuSeconds * 1000) / settings.events,
    memory,
  };
  log(`${label}: ${thousands(result.perSecond)} deliveries/s (${fixed(seconds, 2)} s, first arrival after ${fixed(result.firstArrivalSeconds, 2)} s, ${thousands(stats.calls)} calls), server CPU ${fixed(result.cpuMsPerDelivery, 3)} ms/delivery, peak VmHWM ${fixed(memory.peakHwmMb, 0)} MB, load ${fixed(loadAverage(), 1)}`);
  const concurrency = Math.min(PER_WORKSPACE, PER_WEBHOOK * webhookCount);
  const baseline = await runBaseline(settings.events, secrets, receiver, concurrency);
  log(`${label}: baseline at ${concurrency} in flight ${thousands(baseline.perSecond)} deliveries/s (${fixed(baseline.seconds, 2)} s), CPU ${fixed(baseline.cpuMsPerCall, 3)} ms/call`);
  let baselineAt64: Baseline | null = null;
  if (concurrency < UNCAPPED) {
    baselineAt64 = await runBaseline(settings.events, secrets, receiver, UNCAPPED);
    log(`${label}: baseline at ${UNCAPPED} in flight ${thousands(baselineAt64.perSecond)} deliveries/s (${fixed(baselineAt64.seconds, 2)} s), CPU ${fixed(baselineAt64.cpuMsPerCall, 3)} ms/call`);
  }
  return { ...result, baseline, baselineAt64 };
}

// ---------------------------------------------------------------------------------------------
// The baseline: a bare loop of the same signed calls

interface Baseline {
  perSecond: number;
  seconds: number;
  /** CPU time of this process (the sending loop) per call. */
  cpuMsPerCall: number;
}

/**
 * `count` event messages of the shape the worker sends, each signed with a fresh timestamp as an
 * attempt is, POSTed with undici (its own Agent, as the worker has) by `concurrency` concurrent
 * loops, to the webhooks' URLs in turn.
 */
async function runBaseline(count: number, secrets: string[], receiver: ReceiverHandle, concurrency: number): Promise<Baseline> {
  receiver.reset();
  const agent = new Agent({ headersTimeout: 10_000, bodyTimeout: 10_000 });
  const createdAt = new Date().toISOString();
  let next = 0;
  const started = performance.now();
  const cpuBefore = process.cpuUsage();
  const loop = async () => {
    while (next < count) {
      const i = next++;
      const webhook = i % secrets.length;
      const id = `evt_baseline${String(i).padStart(14, '0')}`;
      const body = JSON.stringify({
        id,
        type: 'record.created',
        createdAt,
        workspaceId: 'ws_baseline0000000000000000',
        collectionId: 'col_baseline000000000000000',
        data: { record: { id: `rec_baseline${String(i).padStart(13, '0')}`, data: { n: i, name: `record ${i} of the webhook benchmark` } } },
      });
      const timestamp = String(Math.floor(Date.now() / 1000));
      const response = await request(`${receiver.url}/${webhook}`, {
        method: 'POST',
        dispatcher: agent,
        headers: {
          'content-type': 'application/json',
          'user-agent': 'Plainbase-Webhooks/1',
          'x-baas-event': 'record.created',
          'x-baas-delivery': id,
          'x-baas-timestamp': timestamp,
          'x-baas-signature': signPayload(secrets[webhook]!, timestamp, body),
          'x-baas-webhook-id': `wh_baseline${webhook}`,
        },
        body,
        signal: AbortSignal.timeout(10_000),
      });
      await response.body.text();
      if (response.statusCode !== 200) throw new Error(`baseline: the receiver answered ${response.statusCode}`);
    }
  };
  try {
    await Promise.all(Array.from({ length: concurrency }, loop));
  } finally {
    await agent.close();
  }
  const seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  const stats = await receiver.stats();
  if (stats.distinct !== count) throw new Error(`baseline: the receiver counted ${stats.distinct} of ${count}`);
  return { perSecond: count / seconds, seconds, cpuMsPerCall: (cpu.user + cpu.system) / 1000 / count };
}

// ---------------------------------------------------------------------------------------------
// Latency at a steady rate

interface Latency {
  engine: Engine;
  /** Whether a neighbouring workspace's receivers hung throughout. */
  beside: 'alone' | 'hanging neighbour';
  events: number;
  sentPerSecond: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  apiP50: number;
  apiP99: number;
  apiErrors: number;
  /** Server CPU time over the measured seconds, as a share of one core. */
  serverCpuShare: number;
  memory: MemoryReport;
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/** A receiver that accepts every call and never answers: what a stuck customer server looks like. */
async function startHangingReceiver(): Promise<{ url: string; open: () => number; stop: () => Promise<void> }> {
  const { createServer } = await import('node:http');
  let open = 0;
  const server = createServer((request) => {
    open++;
    request.resume();
    request.socket.once('close', () => open--);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const stop = async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  onCleanup('hanging receiver', stop);
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hang`, open: () => open, stop };
}

/**
 * Workspace A of run 4: HANGING_WEBHOOKS webhooks to the hanging receiver and HANGING_BACKLOG
 * events for each, then a wait until the worker holds A's whole share open.
 */
async function hangNeighbour(server: Server, session: Record<string, string>, label: string): Promise<() => Promise<void>> {
  const hanging = await startHangingReceiver();
  expectStatus(await callJson(server.baseUrl, 'POST', '/v1/collections', session, { name: 'stuck' }), 201, 'creating the stuck collection');
  for (let i = 0; i < HANGING_WEBHOOKS; i++) {
    expectStatus(await callJson(server.baseUrl, 'POST', '/v1/webhooks', session, { url: `${hanging.url}/${i}`, events: ['record.created'] }), 201, 'creating a hanging webhook');
  }
  const upload = await streamUpload({
    url: `${server.baseUrl}/v1/collections/stuck/import`,
    headers: { ...session, 'content-type': 'application/x-ndjson' },
    chunks: () => ndjson(HANGING_BACKLOG),
  });
  if (upload.status !== 200) throw new Error(`the neighbour's import answered ${upload.status} ${upload.body.slice(0, 300)}`);
  const deadline = Date.now() + 10_000;
  while (hanging.open() < PER_WORKSPACE && Date.now() < deadline) await sleep(20);
  log(`${label}: the neighbour's ${HANGING_WEBHOOKS} receivers hang with ${hanging.open()} calls open (its share: ${PER_WORKSPACE})`);
  return hanging.stop;
}

async function latency(engine: Engine, settings: Settings, receiver: ReceiverHandle, beside: Latency['beside'] = 'alone'): Promise<Latency> {
  const label = `${engine}, latency${beside === 'alone' ? '' : ` beside a ${beside}`}`;
  const place = await freshPlace(engine, settings);
  const profileDir = settings.cpuProfileDir ? path.join(settings.cpuProfileDir, `${engine}-latency`) : null;
  const server = await startPlainbase(engine, place, true, profileDir);
  const sampler = new MemorySampler(server.pid).start();
  const warmup = settings.rate * settings.warmupSeconds;
  const total = warmup + settings.rate * settings.seconds;
  const apiTimes: number[] = [];
  let apiErrors = 0;
  let memory: MemoryReport;
  let stats: ReceiverStats;
  let measuredSeconds = Number.NaN;
  let cpuSeconds = Number.NaN;
  let stopNeighbour: (() => Promise<void>) | null = null;
  try {
    let session = await signInOwner(server.baseUrl);
    if (beside === 'hanging neighbour') {
      stopNeighbour = await hangNeighbour(server, session, label);
      const other = expectStatus(await callJson(server.baseUrl, 'POST', '/v1/workspaces', session, { name: 'B' }), 201, 'creating workspace B');
      session = { ...session, 'x-baas-workspace': (other.body as { id: string }).id };
    }
    await setUpWebhooks(server, session, receiver.url, 1);
    receiver.reset();
    log(`${label}: creating records at ${settings.rate}/s for ${settings.warmupSeconds} s of warm-up (not counted) + ${settings.seconds} s`);
    // Open loop: each create leaves at its own time, whether or not the previous ones have been answered.
    const pool = new Pool(server.baseUrl, { connections: 32 });
    const headers = { ...session, 'content-type': 'application/json' };
    const calls: Promise<void>[] = [];
    const started = performance.now();
    let cpuBefore = Number.NaN;
    let measuredFrom = started;
    for (let i = 0; i < total; i++) {
      // Interrupted: the servers are being stopped; sending more only makes errors.
      if (isInterrupted()) throw new Error('interrupted');
      const due = started + (i * 1000) / settings.rate;
      const wait = due - performance.now();
      if (wait > 1) await sleep(wait); // pacing the open loop
      if (i === warmup) {
        if (engine === 'postgres') await analyzeIfNoAutovacuum(place.env.PLAINBASE_DATABASE_URL!, label);
        // Events created from now on count; the warm-up's are answered but not counted.
        measuredFrom = performance.now();
        receiver.reset(performance.timeOrigin + measuredFrom);
        cpuBefore = readCpuSeconds(server.pid) ?? Number.NaN;
      }
      const counted = i >= warmup;
      const sentAt = performance.now();
      calls.push(
        pool
          .request({ method: 'POST', path: '/v1/collections/bench/records', headers, body: JSON.stringify({ data: { n: i, name: `record ${i}` } }) })
          .then(async (response) => {
            await response.body.text();
            if (!counted) return;
            if (response.statusCode === 201) apiTimes.push(performance.now() - sentAt);
            else apiErrors++;
          })
          .catch(() => {
            if (counted) apiErrors++;
          }),
      );
    }
    await Promise.all(calls);
    measuredSeconds = (performance.now() - measuredFrom) / 1000;
    if (profileDir) {
      const window = { phase: 'measured', from: performance.timeOrigin + measuredFrom - server.startedAt, to: Date.now() - server.startedAt };
      fs.mkdirSync(profileDir, { recursive: true });
      fs.writeFileSync(path.join(profileDir, 'phases.json'), JSON.stringify([window]));
    }
    await pool.close();
    stats = await receiver.waitFor(total - warmup - apiErrors, 120_000);
    cpuSeconds = (readCpuSeconds(server.pid) ?? Number.NaN) - cpuBefore;
  } finally {
    memory = sampler.stop();
    await stopNeighbour?.();
    await server.stop();
  }
  const api = Float64Array.from(apiTimes).sort();
  const result = {
    engine,
    beside,
    events: stats.distinct,
    sentPerSecond: (total - warmup) / measuredSeconds,
    p50: stats.latency.p50,
    p90: stats.latency.p90,
    p99: stats.latency.p99,
    max: stats.latency.max,
    apiP50: percentile(api, 50),
    apiP99: percentile(api, 99),
    apiErrors,
    serverCpuShare: cpuSeconds / measuredSeconds,
    memory,
  };
  log(`${label}: event → first attempt p50 ${fixed(result.p50, 1)} ms, p90 ${fixed(result.p90, 1)} ms, p99 ${fixed(result.p99, 1)} ms, max ${fixed(result.max, 0)} ms over ${thousands(result.events)} events (${fixed(result.sentPerSecond, 0)} creates/s sent; create answered in p50 ${fixed(result.apiP50, 1)} ms, p99 ${fixed(result.apiP99, 1)} ms${apiErrors ? `, ${apiErrors} errors` : ''}); server CPU ${fixed(result.serverCpuShare * 100, 0)}% of a core, peak VmHWM ${fixed(memory.peakHwmMb, 0)} MB, load ${fixed(loadAverage(), 1)}`);
  return result;
}

// ---------------------------------------------------------------------------------------------
// Report

async function main(): Promise<void> {
  const settings = readSettings();
  cleanUpOnSignals();
  const started = Date.now();
  const header = [
    '# Webhook delivery benchmark',
    `settings: BENCH_EVENTS=${settings.events} BENCH_WEBHOOKS=${settings.webhooks} BENCH_RATE=${settings.rate} BENCH_SECONDS=${settings.seconds} BENCH_WARMUP_SECONDS=${settings.warmupSeconds} BENCH_ENGINES=${settings.engines.join(',')} BENCH_SCENARIOS=${settings.scenarios.join(',')}; worker caps ${PER_WORKSPACE} calls per workspace, ${PER_WEBHOOK} per webhook (baseline the same)`,
    `machine: ${(await import('node:os')).cpus().length} cores, load average at start ${fixed(loadAverage(), 1)}; node ${process.version}`,
  ];
  for (const line of header) log(line);
  const receiver = await startReceiver();
  const drains: Drain[] = [];
  const latencies: Latency[] = [];
  const failures: string[] = [];
  for (const engine of settings.engines) {
    for (const scenario of settings.scenarios) {
      if (isInterrupted()) return;
      try {
        if (scenario === 'latency') latencies.push(await latency(engine, settings, receiver));
        else if (scenario === 'neighbour') latencies.push(await latency(engine, settings, receiver, 'hanging neighbour'));
        else drains.push(await drain(engine, scenario === 'one' ? 1 : settings.webhooks, settings, receiver));
      } catch (error) {
        if (isInterrupted()) return;
        failures.push(`${engine} ${scenario}: ${(error as Error).message}`);
        log(`${engine} ${scenario}: FAILED: ${(error as Error).message}`);
      }
    }
  }

  if (isInterrupted()) return;
  const out: string[] = ['', '='.repeat(100), ...header, `load average at end ${fixed(loadAverage(), 1)}; the run took ${fixed((Date.now() - started) / 60_000, 1)} min`, ''];
  out.push('## Draining queued events (worker off while queueing, then on)');
  out.push(
    formatTable(
      ['engine', 'webhooks', 'deliveries', 'seconds', 'deliveries/s', 'baseline/s', 'ratio', 'base@64/s', 'ratio@64', 'first after s', 'calls', 'CPU ms/dlv', 'base CPU ms', 'VmHWM MB'],
      drains.map((d) => [
        d.engine, String(d.webhooks), thousands(d.deliveries), fixed(d.seconds, 2), thousands(d.perSecond), thousands(d.baseline.perSecond),
        fixed(d.perSecond / d.baseline.perSecond, 2), d.baselineAt64 ? thousands(d.baselineAt64.perSecond) : '-', d.baselineAt64 ? fixed(d.perSecond / d.baselineAt64.perSecond, 2) : '-',
        fixed(d.firstArrivalSeconds, 2), thousands(d.calls), fixed(d.cpuMsPerDelivery, 3), fixed(d.baseline.cpuMsPerCall, 3), fixed(d.memory.peakHwmMb, 0),
      ]),
    ),
  );
  out.push('seconds: from the worker\'s start ("Plainbase is running" log line) to the last delivery at the receiver, fan-out included;');
  out.push(`baseline: a bare undici loop POSTing as many signed bodies to the same receiver right after, with as many in flight as the worker may have (${PER_WEBHOOK} per webhook, ${PER_WORKSPACE} per workspace: every webhook here is in one workspace);`);
  out.push(`base@64: the same loop at ${UNCAPPED} in flight, uncapped; calls > deliveries would be duplicates;`);
  out.push('CPU ms/dlv: server CPU time per delivery (fan-out, claim, send, log); base CPU ms: the baseline loop\'s CPU time per call (send only).');
  out.push('', `## Event → first attempt at ${settings.rate} creates/s for ${settings.seconds} s after ${settings.warmupSeconds} s of warm-up (one webhook)`);
  out.push(`beside a hanging neighbour: another workspace has ${HANGING_WEBHOOKS} webhooks whose receiver never answers, ${HANGING_BACKLOG} events each, holding its share open throughout`);
  out.push(
    formatTable(
      ['engine', 'beside', 'events', 'creates/s', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms', 'create p50 ms', 'create p99 ms', 'server CPU', 'VmHWM MB'],
      latencies.map((l) => [
        l.engine, l.beside, thousands(l.events), fixed(l.sentPerSecond, 0), fixed(l.p50, 1), fixed(l.p90, 1), fixed(l.p99, 1), fixed(l.max, 0),
        fixed(l.apiP50, 1), fixed(l.apiP99, 1), `${fixed(l.serverCpuShare * 100, 0)}%`, fixed(l.memory.peakHwmMb, 0),
      ]),
    ),
  );
  const summary: string[] = [];
  for (const engine of settings.engines) {
    const checks: { what: string; pass: boolean }[] = [];
    for (const d of drains.filter((run) => run.engine === engine)) {
      checks.push({ what: `${d.webhooks} webhook(s): ${thousands(d.perSecond)} deliveries/s ≥ ${thousands(TARGET.deliveriesPerSecond)}`, pass: d.perSecond >= TARGET.deliveriesPerSecond });
      const at64 = d.baselineAt64 ? ` (${fixed(d.perSecond / d.baselineAt64.perSecond, 2)} to the uncapped loop at ${UNCAPPED})` : '';
      checks.push({ what: `${d.webhooks} webhook(s): ratio to the baseline ${fixed(d.perSecond / d.baseline.perSecond, 2)} ≥ ${TARGET.ratio}${at64}`, pass: d.perSecond / d.baseline.perSecond >= TARGET.ratio });
      checks.push({ what: `${d.webhooks} webhook(s): server memory peak ${fixed(d.memory.peakHwmMb, 0)} MB < ${TARGET.memoryMb} MB`, pass: d.memory.peakHwmMb < TARGET.memoryMb });
    }
    for (const l of latencies.filter((run) => run.engine === engine && run.beside !== 'alone')) {
      const alone = latencies.find((run) => run.engine === engine && run.beside === 'alone');
      const ratio = alone ? ` (alone: p50 ${fixed(alone.p50, 1)} ms, p99 ${fixed(alone.p99, 1)} ms)` : '';
      checks.push({ what: `beside a hanging neighbour: p50 ${fixed(l.p50, 1)} ms, p99 ${fixed(l.p99, 1)} ms < ${TARGET.neighbourP99Ms} ms${ratio}`, pass: l.p99 < TARGET.neighbourP99Ms });
    }
    for (const l of latencies.filter((run) => run.engine === engine && run.beside === 'alone')) {
      checks.push({ what: `latency p50 ${fixed(l.p50, 1)} ms < ${TARGET.p50Ms} ms`, pass: l.p50 < TARGET.p50Ms });
      checks.push({ what: `latency p99 ${fixed(l.p99, 1)} ms < ${TARGET.p99Ms} ms`, pass: l.p99 < TARGET.p99Ms });
      checks.push({ what: `latency run: server memory peak ${fixed(l.memory.peakHwmMb, 0)} MB < ${TARGET.memoryMb} MB`, pass: l.memory.peakHwmMb < TARGET.memoryMb });
    }
    const note = engine === 'postgres' ? ' (targets are set for SQLite; shown for reference)' : '';
    summary.push(`${engine}: ${checks.filter((check) => check.pass).length} of ${checks.length} targets met${note}`);
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
