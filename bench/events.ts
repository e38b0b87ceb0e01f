/**
 * Benchmark of the event feed and stream (`npm run bench:events`). A report, never a test: it
 * prints figures and exits 0 even when a target is missed (MISS); 1 only when it could not run.
 *
 * For each engine (SQLite in a fresh data dir, PostgreSQL in a fresh database), Plainbase runs as
 * its own process (`node bin/plainbase.js serve`, worker on):
 *
 * 1. Live: BENCH_SUBSCRIBERS streams (`GET /v1/events/stream?types=record.created`, each its own
 *    connection, held by this process) while records are created through the API at BENCH_RATE
 *    per second (open loop) for BENCH_WARMUP_SECONDS (not counted) + BENCH_SECONDS. Latency is a
 *    subscriber's arrival time minus the event's createdAt (the writing request's time, just
 *    before its commit), over every subscriber and event. Server memory (VmRSS) is read at the
 *    end of the warm-up, at each tenth of the run and at the end.
 * 2. Catch-up: BENCH_CATCHUP_EVENTS records imported in one NDJSON body, then read back through
 *    `GET /v1/events?after=…&limit=1000`, page after page, as a receiver catching up would.
 *    Baseline, in the same run: the same pages read straight from the database by this process
 *    (the feed's SQL and message text, no HTTP): ratio = feed events/s ÷ baseline's.
 *
 * Targets: p99 commit → subscriber < 100 ms; server memory flat (at the end within 10%, or
 * 20 MB, of what it was half-way through); catch-up ≥ 50,000 events/s.
 * Env: BENCH_SUBSCRIBERS (100), BENCH_RATE (500),
 * BENCH_SECONDS (60; 300 is the five-minute memory check), BENCH_WARMUP_SECONDS (5),
 * BENCH_CATCHUP_EVENTS (1000000), BENCH_ENGINES ("sqlite,postgres"), BENCH_PG_URL.
 */
import { request as httpRequest } from 'node:http';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import pg from 'pg';
import { Pool } from 'undici';
import { benchPostgresUrl, createDatabase } from './support/databases.js';
import { callJson, expectStatus, streamUpload } from './support/http.js';
import { loadAverage, readMemory } from './support/memory.js';
import { cleanUpOnSignals, cleanupAll, freePort, isInterrupted, makeTempDir, startServer, type Server } from './support/processes.js';
import { OWNER_ENV, signInOwner } from './support/owner.js';
import { benchEngines, wholeNumber } from './support/settings.js';
import { fixed, formatTable, thousands } from './support/table.js';

type Engine = 'sqlite' | 'postgres';
const TARGET = { p99Ms: 100, catchUpPerSecond: 50_000, memoryGrowth: 0.1, memoryGrowthMb: 20 };

function readSettings() {
  const engines = benchEngines();
  return {
    subscribers: wholeNumber('BENCH_SUBSCRIBERS', 100, 1),
    rate: wholeNumber('BENCH_RATE', 500, 1),
    seconds: wholeNumber('BENCH_SECONDS', 60, 1),
    warmupSeconds: wholeNumber('BENCH_WARMUP_SECONDS', 5, 0),
    catchUpEvents: wholeNumber('BENCH_CATCHUP_EVENTS', 1_000_000, 1000),
    engines: engines as Engine[],
    pgUrl: benchPostgresUrl(),
  };
}
type Settings = ReturnType<typeof readSettings>;

const log = (line: string) => {
  if (!isInterrupted()) process.stdout.write(`· ${line}\n`);
};

interface Running {
  server: Server;
  dataDir: string;
  databaseUrl: string | null;
  headers: Record<string, string>;
}

async function startPlainbase(engine: Engine, settings: Settings): Promise<Running> {
  const dataDir = makeTempDir(`plainbase-bench-events-${engine}-`);
  const databaseUrl = engine === 'postgres' ? await createDatabase(settings.pgUrl, 'events') : null;
  const port = await freePort();
  const server = await startServer({
    name: `Plainbase (${engine})`,
    args: ['bin/plainbase.js', 'serve'],
    env: {
      PLAINBASE_HOST: '127.0.0.1',
      PLAINBASE_PORT: String(port),
      PLAINBASE_DATA_DIR: dataDir,
      PLAINBASE_DATABASE_URL: databaseUrl ?? '',
      PLAINBASE_LOG_LEVEL: 'warn',
      PLAINBASE_RATE_LIMIT_PER_KEY: '0',
      PLAINBASE_RATE_LIMIT_PER_IP: '0',
      PLAINBASE_STREAMS_PER_CALLER: String(settings.subscribers + 10),
      ...OWNER_ENV,
    },
    port,
    readyPath: '/readyz',
  });
  const session = await signInOwner(server.baseUrl);
  const key = expectStatus(await callJson(server.baseUrl, 'POST', '/v1/keys', session, { name: 'bench', scopes: ['records:read', 'records:create', 'collections:create'] }), 201, 'creating a key');
  return { server, dataDir, databaseUrl, headers: { authorization: `Bearer ${(key.body as { secret: string }).secret}` } };
}

// ---------------------------------------------------------------------------------------------
// 1. Live

interface Live {
  engine: Engine;
  subscribers: number;
  events: number;
  received: number;
  p50: number;
  p99: number;
  max: number;
  rssAfterWarmupMb: number;
  /** RSS half-way through the measured run: the second half must be flat. */
  rssHalfwayMb: number;
  rssEndMb: number;
}

/** One stream held open; counts arrivals of records numbered from `countFrom` on, with their latency. */
function subscribe(base: string, headers: Record<string, string>, latencies: number[], countFrom: () => number): Promise<() => void> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(`${base}/v1/events/stream?types=record.created`, { headers: { ...headers, accept: 'text/event-stream' } }, (response) => {
      if (response.statusCode !== 200) return reject(new Error(`a stream answered ${response.statusCode}`));
      let buffer = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        const now = performance.timeOrigin + performance.now();
        buffer += chunk;
        const end = buffer.lastIndexOf('\n\n');
        if (end < 0) return;
        const complete = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        // Without parsing each message: its createdAt, and the record's n (the warm-up's are not counted).
        for (const match of complete.matchAll(/"createdAt":"([^"]+)".*?"data":\{"n":(\d+)/g)) {
          if (Number(match[2]) >= countFrom()) latencies.push(now - Date.parse(match[1]!));
        }
      });
      resolve(() => request.destroy());
    });
    request.on('error', (error) => {
      if (!isInterrupted()) reject(error);
    });
    request.end();
  });
}

async function live(engine: Engine, settings: Settings): Promise<Live> {
  const running = await startPlainbase(engine, settings);
  const { server, headers } = running;
  const latencies: number[] = [];
  const warmup = settings.rate * settings.warmupSeconds;
  const countFrom = warmup;
  const closers: (() => void)[] = [];
  try {
    expectStatus(await callJson(server.baseUrl, 'POST', '/v1/collections', headers, { name: 'live' }), 201, 'creating the collection');
    for (let i = 0; i < settings.subscribers; i++) closers.push(await subscribe(server.baseUrl, headers, latencies, () => countFrom));
    log(`${engine}, live: ${settings.subscribers} streams open; creating records at ${settings.rate}/s for ${settings.warmupSeconds} s of warm-up + ${settings.seconds} s`);
    const pool = new Pool(server.baseUrl, { connections: 32 });
    const body = (i: number) => JSON.stringify({ data: { n: i, name: `record ${i} of the events benchmark` } });
    const total = warmup + settings.rate * settings.seconds;
    const calls: Promise<void>[] = [];
    let failed = 0;
    let rssAfterWarmupMb = Number.NaN;
    // RSS at each tenth of the measured run: growth that stops (the heap and the hub's window of
    // recent events filling up) is no leak; growth that goes on to the end is.
    const rssSamplesMb: number[] = [];
    const tenth = Math.max(1, Math.floor((total - warmup) / 10));
    const started = performance.now();
    for (let i = 0; i < total; i++) {
      if (isInterrupted()) throw new Error('interrupted');
      const wait = started + (i * 1000) / settings.rate - performance.now();
      if (wait > 1) await sleep(wait);
      if (i === warmup) {
        rssAfterWarmupMb = (readMemory(server.pid)?.rssKb ?? Number.NaN) / 1024;
      }
      if (i >= warmup && (i - warmup) % tenth === 0) rssSamplesMb.push((readMemory(server.pid)?.rssKb ?? Number.NaN) / 1024);
      calls.push(
        pool
          .request({ method: 'POST', path: '/v1/collections/live/records', headers: { ...headers, 'content-type': 'application/json' }, body: body(i) })
          .then(async (response) => {
            await response.body.text();
            if (response.statusCode !== 201) failed++;
          })
          .catch(() => void failed++),
      );
    }
    await Promise.all(calls);
    await pool.close();
    const expected = (total - warmup - failed) * settings.subscribers;
    const deadline = Date.now() + 30_000;
    while (latencies.length < expected && Date.now() < deadline) await sleep(50);
    const rssEndMb = (readMemory(server.pid)?.rssKb ?? Number.NaN) / 1024;
    const rssHalfwayMb = rssSamplesMb[Math.floor(rssSamplesMb.length / 2)] ?? Number.NaN;
    const sorted = Float64Array.from(latencies).sort();
    const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
    const result = { engine, subscribers: settings.subscribers, events: total - warmup - failed, received: latencies.length, p50: at(50), p99: at(99), max: sorted.at(-1) ?? Number.NaN, rssAfterWarmupMb, rssHalfwayMb, rssEndMb };
    log(`${engine}, live: commit → subscriber p50 ${fixed(result.p50, 1)} ms, p99 ${fixed(result.p99, 1)} ms, max ${fixed(result.max, 0)} ms; ${thousands(result.received)} of ${thousands(expected)} arrivals; server RSS ${fixed(rssAfterWarmupMb, 0)} → ${fixed(rssEndMb, 0)} MB (each tenth: ${rssSamplesMb.map((mb) => fixed(mb, 0)).join(', ')}); load ${fixed(loadAverage(), 1)}`);
    return result;
  } finally {
    for (const close of closers) close();
    await server.stop();
  }
}

// ---------------------------------------------------------------------------------------------
// 2. Catch-up

interface CatchUp {
  engine: Engine;
  events: number;
  seconds: number;
  perSecond: number;
  baselinePerSecond: number;
}

function* ndjson(count: number): Generator<string> {
  for (let start = 0; start < count; start += 1000) {
    let chunk = '';
    for (let i = start; i < Math.min(count, start + 1000); i++) chunk += `{"n":${i},"name":"record ${i} of the events benchmark"}\n`;
    yield chunk;
  }
}

async function catchUp(engine: Engine, settings: Settings): Promise<CatchUp> {
  const running = await startPlainbase(engine, settings);
  const { server, headers } = running;
  try {
    for (const name of ['marker', 'catchup']) expectStatus(await callJson(server.baseUrl, 'POST', '/v1/collections', headers, { name }), 201, `creating ${name}`);
    const marker = expectStatus(await callJson(server.baseUrl, 'POST', '/v1/collections/marker/records', headers, { data: { at: 'start' } }), 201, 'the start marker');
    log(`${engine}, catch-up: importing ${thousands(settings.catchUpEvents)} records`);
    const upload = await streamUpload({ url: `${server.baseUrl}/v1/collections/catchup/import`, headers: { ...headers, 'content-type': 'application/x-ndjson' }, chunks: () => ndjson(settings.catchUpEvents) });
    if (upload.status !== 200) throw new Error(`import answered ${upload.status} ${upload.body.slice(0, 300)}`);
    const sentinel = expectStatus(await callJson(server.baseUrl, 'POST', '/v1/collections/marker/records', headers, { data: { at: 'end' } }), 201, 'the end marker');
    // Every imported event is in the feed once the end marker, written after them, is.
    const markerId = await eventOf(server, headers, (marker.body as { id: string }).id);
    await eventOf(server, headers, (sentinel.body as { id: string }).id, 600_000);
    log(`${engine}, catch-up: imported and fanned out; reading the feed in pages of 1,000`);

    const started = performance.now();
    let count = 0;
    let next: string | null = `/v1/events?collections=catchup&after=${markerId}&limit=1000`;
    while (next) {
      const page = expectStatus(await callJson(server.baseUrl, 'GET', next, headers), 200, 'reading the feed');
      const { data, nextCursor } = page.body as { data: unknown[]; nextCursor: string | null };
      count += data.length;
      next = nextCursor ? `/v1/events?collections=catchup&limit=1000&cursor=${nextCursor}` : null;
    }
    const seconds = (performance.now() - started) / 1000;
    if (count !== settings.catchUpEvents) throw new Error(`the feed gave ${count} events, not ${settings.catchUpEvents}`);
    log(`${engine}, catch-up: the feed gave ${thousands(count)} events in ${fixed(seconds, 1)} s (${thousands(count / seconds)} events/s)`);
    const baselinePerSecond = await readStraight(engine, running, settings.catchUpEvents);
    const result = { engine, events: count, seconds, perSecond: count / seconds, baselinePerSecond };
    log(`${engine}, catch-up: ${thousands(result.perSecond)} events/s through the feed (${fixed(seconds, 1)} s); straight from the database ${thousands(baselinePerSecond)} events/s`);
    return result;
  } finally {
    await server.stop();
  }
}

/** The feed id of the event of a record's creation, waiting until it is in the feed. */
async function eventOf(server: Server, headers: Record<string, string>, recordId: string, timeoutMs = 30_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const page = expectStatus(await callJson(server.baseUrl, 'GET', '/v1/events?collections=marker&types=record.created&limit=10', headers), 200, 'finding a marker');
    const found = (page.body as { data: { id: string; data: { record: { id: string } } }[] }).data.find((event) => event.data.record.id === recordId);
    if (found) return found.id;
    await sleep(200);
  }
  throw new Error(`the event of ${recordId} did not reach the feed within ${timeoutMs} ms`);
}

/** The baseline: the same pages, the feed's query and message text, read by this process with no HTTP. */
async function readStraight(engine: Engine, running: Running, expected: number): Promise<number> {
  const sql = (parameter: (n: number) => string) =>
    `select seq, id, type, created_at, workspace_id, collection_id, data from events
     where workspace_id = ${parameter(1)} and collection_id = ${parameter(2)} and type = 'record.created' and seq is not null and seq > ${parameter(3)}
     order by seq limit 1000`;
  const text = (row: { id: string; type: string; created_at: string; workspace_id: string; collection_id: string; data: string }) =>
    `{"id":"${row.id}","type":"${row.type}","createdAt":"${row.created_at}","workspaceId":"${row.workspace_id}","collectionId":"${row.collection_id}","data":${row.data}}`;
  type Row = Parameters<typeof text>[0] & { seq: number };
  let read: (after: number) => Promise<Row[]>;
  let close: () => Promise<void>;
  let scope: [string, string];
  if (engine === 'sqlite') {
    const db = new Database(path.join(running.dataDir, 'plainbase.db'), { readonly: true });
    const found = db.prepare("select workspace_id, id from collections where name = 'catchup'").get() as { workspace_id: string; id: string };
    scope = [found.workspace_id, found.id];
    const statement = db.prepare<[string, string, number], Row>(sql(() => '?'));
    read = async (after) => statement.all(...scope, after);
    close = async () => void db.close();
  } else {
    const client = new pg.Client({ connectionString: running.databaseUrl! });
    await client.connect();
    const { rows } = await client.query("select workspace_id, id from collections where name = 'catchup'");
    scope = [rows[0].workspace_id, rows[0].id];
    read = async (after) => (await client.query<Row>({ name: 'bench_feed', text: sql((n) => `$${n}`), values: [...scope, after] })).rows;
    close = () => client.end();
  }
  try {
    const started = performance.now();
    let after = 0;
    let count = 0;
    let bytes = 0;
    for (;;) {
      const rows = await read(after);
      if (rows.length === 0) break;
      bytes += `[${rows.map(text).join(',')}]`.length;
      count += rows.length;
      after = Number(rows[rows.length - 1]!.seq);
    }
    if (count !== expected || bytes === 0) throw new Error(`the baseline read ${count} events, not ${expected}`);
    return count / ((performance.now() - started) / 1000);
  } finally {
    await close();
  }
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const settings = readSettings();
  cleanUpOnSignals();
  const header = [
    '# Event feed and stream benchmark',
    `settings: BENCH_SUBSCRIBERS=${settings.subscribers} BENCH_RATE=${settings.rate} BENCH_SECONDS=${settings.seconds} BENCH_WARMUP_SECONDS=${settings.warmupSeconds} BENCH_CATCHUP_EVENTS=${settings.catchUpEvents} BENCH_ENGINES=${settings.engines.join(',')}`,
    `machine: ${(await import('node:os')).cpus().length} cores, load average at start ${fixed(loadAverage(), 1)}; node ${process.version}`,
  ];
  for (const line of header) log(line);
  const lives: Live[] = [];
  const catchUps: CatchUp[] = [];
  const failures: string[] = [];
  for (const engine of settings.engines) {
    for (const [name, run] of [['live', () => live(engine, settings).then((r) => void lives.push(r))], ['catch-up', () => catchUp(engine, settings).then((r) => void catchUps.push(r))]] as const) {
      if (isInterrupted()) return;
      try {
        await run();
      } catch (error) {
        if (isInterrupted()) return;
        failures.push(`${engine} ${name}: ${(error as Error).message}`);
        log(`${engine} ${name}: FAILED: ${(error as Error).message}`);
      }
    }
  }
  const out = ['', '='.repeat(100), ...header, `load average at end ${fixed(loadAverage(), 1)}`, ''];
  out.push(`## Commit → subscriber, ${settings.subscribers} streams, ${settings.rate} events/s for ${settings.seconds} s`);
  out.push(formatTable(['engine', 'events', 'arrivals', 'p50 ms', 'p99 ms', 'max ms', 'RSS after warm-up MB', 'RSS half-way MB', 'RSS at end MB'], lives.map((l) => [
    l.engine, thousands(l.events), thousands(l.received), fixed(l.p50, 1), fixed(l.p99, 1), fixed(l.max, 0), fixed(l.rssAfterWarmupMb, 0), fixed(l.rssHalfwayMb, 0), fixed(l.rssEndMb, 0),
  ])));
  out.push('', `## Catch-up through GET /v1/events in pages of 1,000`);
  out.push(formatTable(['engine', 'events', 'seconds', 'events/s', 'straight from the database/s', 'ratio'], catchUps.map((c) => [
    c.engine, thousands(c.events), fixed(c.seconds, 1), thousands(c.perSecond), thousands(c.baselinePerSecond), fixed(c.perSecond / c.baselinePerSecond, 2),
  ])));
  out.push('', '## Summary');
  for (const engine of settings.engines) {
    const checks: [string, boolean][] = [];
    for (const l of lives.filter((run) => run.engine === engine)) {
      checks.push([`p99 commit → subscriber ${fixed(l.p99, 1)} ms < ${TARGET.p99Ms} ms`, l.p99 < TARGET.p99Ms]);
      checks.push([`every subscriber got every event: ${thousands(l.received)} of ${thousands(l.events * l.subscribers)}`, l.received === l.events * l.subscribers]);
      // Judged on the second half: the first fills the heap and the hub's window of recent events.
      const growth = l.rssEndMb - l.rssHalfwayMb;
      checks.push([`server memory flat over the second half: ${fixed(l.rssHalfwayMb, 0)} → ${fixed(l.rssEndMb, 0)} MB (from ${fixed(l.rssAfterWarmupMb, 0)} MB after the warm-up)`, growth <= Math.max(TARGET.memoryGrowthMb, l.rssHalfwayMb * TARGET.memoryGrowth)]);
    }
    for (const c of catchUps.filter((run) => run.engine === engine)) {
      checks.push([`catch-up ${thousands(c.perSecond)} events/s ≥ ${thousands(TARGET.catchUpPerSecond)} (${fixed(c.perSecond / c.baselinePerSecond, 2)} of reading the database straight)`, c.perSecond >= TARGET.catchUpPerSecond]);
    }
    out.push(`${engine}: ${checks.filter(([, pass]) => pass).length} of ${checks.length} targets met`);
    for (const [what, pass] of checks) out.push(`  ${pass ? 'PASS' : 'MISS'} ${what}`);
  }
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
