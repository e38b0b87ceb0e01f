/**
 * Fair fan-out between workspaces (`npm run bench:fair-fan-out`). A report, never a test: exits 0
 * whatever the figures, 1 only when it could not run.
 *
 * For each engine: start Plainbase (`node bin/plainbase.js serve`, worker on) in a fresh data dir
 * or PostgreSQL database. Workspace A has a webhook on record.created and imports BENCH_RECORDS
 * records (one NDJSON body); workspace B has a webhook too. As soon as the import has answered,
 * B creates BENCH_B_EVENTS records, spread evenly over A's drain (one every BENCH_B_SPACING_MS).
 * A receiver in this process (node:http on loopback, answering 200 at once, addressed as
 * `localhost`) notes when each delivery first arrives. Reported: B's delivery latency (arrival
 * minus the moment its create was sent; p50, p99, max) and A's drain (the import's answer to the
 * last of A's deliveries).
 *
 * With BENCH_BASELINE_DIR (a built checkout of main, e.g. `git worktree add /tmp/main-base main`,
 * node_modules linked, `npm run build:server` there) the same runs against that checkout's server
 * in the same run, and the report gives the ratios: this branch's drain time over the baseline's.
 *
 * Env: BENCH_RECORDS (1000000), BENCH_B_EVENTS (20), BENCH_B_SPACING_MS (drain estimate / events:
 * 500), BENCH_ENGINES ("sqlite,postgres"), BENCH_PG_URL, BENCH_BASELINE_DIR.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { benchPostgresUrl, createDatabase } from './support/databases.js';
import { callJson, expectStatus, streamUpload } from './support/http.js';
import { loadAverage } from './support/memory.js';
import { OWNER_ENV, signInOwner } from './support/owner.js';
import { cleanUpOnSignals, cleanupAll, freePort, makeTempDir, startServer } from './support/processes.js';
import { ndjsonChunks } from './support/records.js';
import { fixed, thousands } from './support/table.js';
import { benchEngines, wholeNumber } from './support/settings.js';

type Engine = 'sqlite' | 'postgres';

const settings = {
  records: wholeNumber('BENCH_RECORDS', 1_000_000, 100),
  bEvents: wholeNumber('BENCH_B_EVENTS', 20, 1),
  spacingMs: wholeNumber('BENCH_B_SPACING_MS', 500, 1),
  engines: benchEngines(),
  pgUrl: benchPostgresUrl(),
  baselineDir: process.env.BENCH_BASELINE_DIR ? path.resolve(process.env.BENCH_BASELINE_DIR) : null,
};

/** Arrivals per path (/a, /b): first arrival time per delivery id (x-baas-delivery, the event id). */
class Arrivals {
  readonly first = new Map<string, Map<string, number>>();
  calls = 0;
  private readonly server = createServer((request: IncomingMessage, response: ServerResponse) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      this.calls += 1;
      const lane = request.url ?? '';
      const id = String(request.headers['x-baas-delivery'] ?? '');
      let seen = this.first.get(lane);
      if (!seen) this.first.set(lane, (seen = new Map()));
      if (!seen.has(id)) seen.set(id, Date.now());
      if (lane === '/b') this.bodies.push(body);
      response.writeHead(200).end();
    });
  });
  readonly bodies: string[] = [];

  async start(): Promise<number> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return (this.server.address() as AddressInfo).port;
  }
  count(lane: string): number {
    return this.first.get(lane)?.size ?? 0;
  }
  last(lane: string): number {
    return Math.max(...(this.first.get(lane)?.values() ?? [0]));
  }
  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;

interface Figures {
  importSeconds: number;
  drainSeconds: number;
  b: { p50: number; p99: number; max: number; delivered: number };
  aDelivered: number;
}

async function run(engine: Engine, root: string): Promise<Figures> {
  const port = await freePort();
  const dataDir = makeTempDir(`plainbase-bench-fair-${engine}-`);
  const env: Record<string, string> = {
    PLAINBASE_PORT: String(port),
    PLAINBASE_HOST: '127.0.0.1',
    PLAINBASE_DATA_DIR: dataDir,
    PLAINBASE_ENV: 'development',
    PLAINBASE_WEBHOOK_ALLOW_PRIVATE: '1',
    PLAINBASE_LOG_LEVEL: 'warn',
    PLAINBASE_RATE_LIMIT_PER_KEY: '0',
    PLAINBASE_RATE_LIMIT_PER_IP: '0',
    ...OWNER_ENV,
    PLAINBASE_DATABASE_URL: engine === 'postgres' ? await createDatabase(settings.pgUrl, 'fair') : '',
  };
  const arrivals = new Arrivals();
  const receiverPort = await arrivals.start();
  const server = await startServer({ name: `Plainbase (${engine}, ${root})`, args: [path.join(root, 'bin/plainbase.js'), 'serve'], env, port, readyPath: '/readyz' });
  try {
    const a = await signInOwner(server.baseUrl);
    const created = expectStatus(await callJson(server.baseUrl, 'POST', '/v1/workspaces', a, { name: 'B' }), 201, 'creating workspace B');
    const b = { ...a, 'x-baas-workspace': (created.body as { id: string }).id };
    for (const [session, lane] of [[a, 'a'], [b, 'b']] as const) {
      expectStatus(await callJson(server.baseUrl, 'POST', '/v1/collections', session, { name: 'bench' }), 201, 'creating a collection');
      expectStatus(await callJson(server.baseUrl, 'POST', '/v1/webhooks', session, { url: `http://localhost:${receiverPort}/${lane}`, events: ['record.created'] }), 201, 'creating a webhook');
    }
    const upload = await streamUpload({
      url: `${server.baseUrl}/v1/collections/bench/import`,
      headers: { ...a, 'content-type': 'application/x-ndjson' },
      chunks: () => ndjsonChunks(settings.records),
    });
    if (upload.status !== 200) throw new Error(`import: HTTP ${upload.status} ${upload.body.slice(0, 300)}`);
    const imported = Date.now();

    // B's creates, spread over A's drain; each one's latency is its first arrival minus its send.
    const sentAt = new Map<string, number>();
    for (let i = 0; i < settings.bEvents; i++) {
      if (i > 0) await sleep(settings.spacingMs);
      const sent = Date.now();
      const reply = expectStatus(await callJson(server.baseUrl, 'POST', '/v1/collections/bench/records', b, { data: { from: 'b', i } }), 201, 'a create in B');
      sentAt.set((reply.body as { id: string }).id, sent);
    }
    const deadline = Date.now() + 3600_000;
    while ((arrivals.count('/a') < settings.records || arrivals.count('/b') < settings.bEvents) && Date.now() < deadline) await sleep(50);
    const latencies: number[] = [];
    for (const [deliveryId, at] of arrivals.first.get('/b') ?? []) {
      const body = arrivals.bodies.find((text) => text.includes(`"id":"${deliveryId}"`));
      const recordId = body ? (JSON.parse(body) as { data: { record: { id: string } } }).data.record.id : '';
      const sent = sentAt.get(recordId);
      if (sent !== undefined) latencies.push(at - sent);
    }
    latencies.sort((x, y) => x - y);
    return {
      importSeconds: upload.seconds,
      drainSeconds: (arrivals.last('/a') - imported) / 1000,
      b: { p50: percentile(latencies, 50), p99: percentile(latencies, 99), max: latencies[latencies.length - 1]!, delivered: latencies.length },
      aDelivered: arrivals.count('/a'),
    };
  } finally {
    await server.stop();
    await arrivals.stop();
  }
}

const line = (engine: Engine, label: string, figures: Figures) =>
  `${engine} ${label}: import ${fixed(figures.importSeconds, 1)} s; A's drain ${fixed(figures.drainSeconds, 1)} s (${thousands(figures.aDelivered)} of ${thousands(settings.records)} delivered);` +
  ` B's ${figures.b.delivered} deliveries: p50 ${Math.round(figures.b.p50)} ms, p99 ${Math.round(figures.b.p99)} ms, max ${Math.round(figures.b.max)} ms`;

cleanUpOnSignals();
try {
  console.log(`settings: BENCH_RECORDS=${settings.records} BENCH_B_EVENTS=${settings.bEvents} BENCH_B_SPACING_MS=${settings.spacingMs} BENCH_ENGINES=${settings.engines.join(',')} BENCH_BASELINE_DIR=${settings.baselineDir ?? '(none)'}; load ${fixed(loadAverage(), 1)}`);
  if (settings.baselineDir) execFileSync('npm', ['run', 'build:server', '--silent'], { cwd: settings.baselineDir, stdio: 'inherit' });
  for (const engine of settings.engines) {
    if (engine !== 'sqlite' && engine !== 'postgres') throw new Error(`BENCH_ENGINES: unknown engine "${engine}"`);
    const branch = await run(engine, process.cwd());
    console.log(line(engine, 'this branch', branch));
    if (!settings.baselineDir) continue;
    const baseline = await run(engine, settings.baselineDir);
    console.log(line(engine, 'baseline', baseline));
    console.log(
      `${engine} ratios (this branch / baseline): A's drain ${fixed(branch.drainSeconds / baseline.drainSeconds, 2)}x (target ≤ 1.10: ${branch.drainSeconds <= 1.1 * baseline.drainSeconds ? 'PASS' : 'MISS'});` +
        ` B's p99 ${fixed(branch.b.p99 / baseline.b.p99, 3)}x (target p99 ≤ 1000 ms: ${branch.b.p99 <= 1000 ? 'PASS' : 'MISS'})`,
    );
  }
} catch (error) {
  console.error(error);
  process.exitCode = 1;
} finally {
  await cleanupAll();
}
