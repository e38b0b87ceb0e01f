/**
 * Benchmark of file upload and download (`npm run bench:files`). A report, never a test: it
 * prints figures and exits 0 even when a target is missed (misses are printed as MISS); it exits
 * 1 only when it could not run at all.
 *
 * - Plainbase (`node bin/plainbase.js serve`, SQLite, files on disk in a fresh data dir) runs as
 *   its own process. The bench signs in, makes a collection and a files:read + files:write key.
 * - The baseline (bench/support/socket-peer.ts), its own process too, is a bare TCP server on
 *   loopback: it reads the bytes sent to it, or sends bytes, and does nothing else.
 * - Each run moves BENCH_FILE_MB of the same pseudo-random bytes (bench/support/transfer-bytes.ts),
 *   in the same 256 KiB writes: to the baseline and up to Plainbase (POST …/files, raw body with
 *   a Content-Length, until the 201 is in), then from the baseline and down from Plainbase
 *   (GET …/files/{fil}/content, to the last byte). Each pair runs back to back, the baseline
 *   first in odd runs and Plainbase first in even ones. The ratio is baseline time over
 *   Plainbase time (1 = as fast as a plain socket copy), of the median times; "paired" is the
 *   median of each run's own ratio (its two sides met the same load); "best ratio" sets the
 *   fastest of each side against each other, which is what is left when other work on the
 *   machine (see the load average printed) slowed some runs. A full-size warm-up run goes first
 *   and is not counted.
 * - Server memory (VmRSS from /proc) is sampled every 20 ms during each transfer; the growth is
 *   the highest RSS seen minus the RSS just before the transfer began.
 * - CPU time (from /proc) of the peer and of Plainbase during each transfer, medians: where the
 *   machine is shared, this says what each side costs better than the times do.
 * The upload's SHA-256 (answered by the server) is checked against the bytes sent, and the
 * download's length against the file's.
 *
 * Targets: upload and download ratio ≥ 0.5, server memory growth < 50 MB.
 * Env: BENCH_FILE_MB (200), BENCH_RUNS (5).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { callJson, expectStatus } from './support/http.js';
import { OWNER_ENV, signInOwner } from './support/owner.js';
import { loadAverage, readCpuSeconds, readMemory } from './support/memory.js';
import { cleanUpOnSignals, cleanupAll, freePort, makeTempDir, onCleanup, startServer, type Server } from './support/processes.js';
import { fixed, formatTable } from './support/table.js';
import { transferBlock, transferChunks } from './support/transfer-bytes.js';
import { wholeNumber } from './support/settings.js';

const MiB = 1024 * 1024;
const TARGET = { ratio: 0.5, memoryGrowthMb: 50 };

const settings = { fileMb: wholeNumber('BENCH_FILE_MB', 200, 1), runs: wholeNumber('BENCH_RUNS', 5, 1) };
const log = (line: string) => process.stdout.write(`· ${line}\n`);
const block = transferBlock();

// ---------------------------------------------------------------------------------------------
// The two sides of each comparison. Every function answers its duration in seconds.

/** Writes the chunks with backpressure honoured. */
function writeAll(target: NodeJS.WritableStream & { destroyed?: boolean }, size: number, done: () => void): void {
  const chunks = transferChunks(block, size);
  const pump = () => {
    for (let next = chunks.next(); !next.done; next = chunks.next()) {
      if (!target.write(next.value)) return void target.once('drain', pump);
    }
    done();
  };
  pump();
}

function baselineUpload(port: number, size: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.write(`U ${size}\n`);
      writeAll(socket, size, () => undefined);
    });
    let answer = '';
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString()));
    socket.on('end', () => (answer === 'ok\n' ? resolve((performance.now() - started) / 1000) : reject(new Error(`baseline answered ${answer}`))));
    socket.on('error', reject);
  });
}

function baselineDownload(port: number, size: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    let received = 0;
    const socket = net.connect(port, '127.0.0.1', () => socket.write(`D ${size}\n`));
    socket.on('data', (chunk: Buffer) => (received += chunk.length));
    socket.on('end', () => (received === size ? resolve((performance.now() - started) / 1000) : reject(new Error(`baseline sent ${received} of ${size} bytes`))));
    socket.on('error', reject);
  });
}

function apiUpload(server: Server, headers: Record<string, string>, size: number): Promise<{ seconds: number; file: { id: string; sha256: string; size: number } }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const request = http.request(`${server.baseUrl}/v1/collections/bench/files?name=bench.bin`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/octet-stream', 'content-length': String(size) },
    }, (response) => {
      const parts: Buffer[] = [];
      response.on('data', (part: Buffer) => parts.push(part));
      response.on('end', () => {
        const seconds = (performance.now() - started) / 1000;
        const body = Buffer.concat(parts).toString('utf8');
        if (response.statusCode !== 201) return reject(new Error(`upload answered ${response.statusCode} ${body.slice(0, 300)}`));
        resolve({ seconds, file: JSON.parse(body) });
      });
    });
    request.on('error', reject);
    writeAll(request, size, () => request.end());
  });
}

function apiDownload(server: Server, headers: Record<string, string>, fileId: string, size: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    http.get(`${server.baseUrl}/v1/collections/bench/files/${fileId}/content`, { headers }, (response) => {
      let received = 0;
      response.on('data', (chunk: Buffer) => (received += chunk.length));
      response.on('end', () => {
        if (response.statusCode !== 200 || received !== size) return reject(new Error(`download answered ${response.statusCode} with ${received} of ${size} bytes`));
        resolve((performance.now() - started) / 1000);
      });
      response.on('error', reject);
    }).on('error', reject);
  });
}

// ---------------------------------------------------------------------------------------------
// Set-up

interface Peer {
  port: number;
  pid: number;
}

async function startPeer(): Promise<Peer> {
  const child: ChildProcess = fork(path.resolve('bench/support/socket-peer.ts'), [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  onCleanup(`socket peer (pid ${child.pid})`, async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    await exited;
  });
  return new Promise((resolve, reject) => {
    child.once('message', (message: { type: string; port: number }) => resolve({ port: message.port, pid: child.pid! }));
    child.once('exit', (code) => reject(new Error(`the socket peer exited with ${code} before it was ready`)));
  });
}

async function startPlainbase(): Promise<{ server: Server; headers: Record<string, string> }> {
  const dir = makeTempDir('plainbase-bench-files-');
  const port = await freePort();
  const server = await startServer({
    name: 'Plainbase',
    args: ['bin/plainbase.js', 'serve'],
    env: {
      PLAINBASE_PORT: String(port),
      PLAINBASE_HOST: '127.0.0.1',
      PLAINBASE_DATA_DIR: dir,
      PLAINBASE_LOG_LEVEL: 'warn',
      PLAINBASE_RATE_LIMIT_PER_KEY: '0',
      PLAINBASE_RATE_LIMIT_PER_IP: '0',
      ...OWNER_ENV,
      // Empty means "not set": SQLite and files in the data dir, whatever the caller's env says.
      PLAINBASE_DATABASE_URL: '',
      PLAINBASE_S3_BUCKET: '',
    },
    port,
    readyPath: '/readyz',
  });
  const session = await signInOwner(server.baseUrl);
  expectStatus(await callJson(server.baseUrl, 'POST', '/v1/collections', session, { name: 'bench' }), 201, 'creating the collection');
  const key = expectStatus(await callJson(server.baseUrl, 'POST', '/v1/keys', session, { name: 'bench', scopes: ['files:read', 'files:write'] }), 201, 'creating the key');
  return { server, headers: { authorization: `Bearer ${(key.body as { secret: string }).secret}` } };
}

function sha256Of(size: number): string {
  const hash = createHash('sha256');
  for (const chunk of transferChunks(block, size)) hash.update(chunk);
  return hash.digest('hex');
}

// ---------------------------------------------------------------------------------------------

interface Run {
  /** CPU seconds (user + system) the receiving or sending process used: the peer, then Plainbase. */
  cpu: { baselineUp: number; apiUp: number; baselineDown: number; apiDown: number };
  baselineUp: number;
  apiUp: number;
  baselineDown: number;
  apiDown: number;
  /** MB of RSS above the level just before the transfer, at its highest. */
  growthUpMb: number;
  growthDownMb: number;
}

/** Runs the transfer; answers its result and the CPU seconds the process `pid` used meanwhile. */
async function countingCpu<T>(pid: number, transfer: () => Promise<T>): Promise<{ result: T; cpuSeconds: number }> {
  const before = readCpuSeconds(pid) ?? Number.NaN;
  const result = await transfer();
  return { result, cpuSeconds: (readCpuSeconds(pid) ?? Number.NaN) - before };
}

/** Runs the transfer while sampling the server's RSS; answers its result and the growth in MB. */
async function watchingMemory<T>(pid: number, transfer: () => Promise<T>): Promise<{ result: T; growthMb: number }> {
  const rssKb = () => readMemory(pid)?.rssKb ?? Number.NaN;
  const before = rssKb();
  let peak = before;
  const timer = setInterval(() => (peak = Math.max(peak, rssKb())), 20);
  try {
    const result = await transfer();
    peak = Math.max(peak, rssKb());
    return { result, growthMb: (peak - before) / 1024 };
  } finally {
    clearInterval(timer);
  }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** Both sides of one comparison, back to back; `apiFirst` says which goes first. */
async function pair<T>(apiFirst: boolean, baseline: () => Promise<T>, api: () => Promise<T>): Promise<{ baseline: T; api: T }> {
  if (apiFirst) {
    const apiResult = await api();
    return { api: apiResult, baseline: await baseline() };
  }
  const baselineResult = await baseline();
  return { baseline: baselineResult, api: await api() };
}

async function oneRun(peer: Peer, server: Server, headers: Record<string, string>, size: number, expectedSha: string, apiFirst: boolean): Promise<Run> {
  const upload = await pair(
    apiFirst,
    async () => ({ ...(await countingCpu(peer.pid, () => baselineUpload(peer.port, size))), growthMb: 0, fileId: '' }),
    async () => {
      const measured = await countingCpu(server.pid, () => watchingMemory(server.pid, () => apiUpload(server, headers, size)));
      const { seconds, file } = measured.result.result;
      if (file.sha256 !== expectedSha || file.size !== size) throw new Error(`the upload came back as ${file.size} bytes, sha256 ${file.sha256}; expected ${size}, ${expectedSha}`);
      return { result: seconds, cpuSeconds: measured.cpuSeconds, growthMb: measured.result.growthMb, fileId: file.id };
    },
  );
  const fileId = upload.api.fileId;
  const download = await pair(
    apiFirst,
    async () => ({ ...(await countingCpu(peer.pid, () => baselineDownload(peer.port, size))), growthMb: 0 }),
    async () => {
      const measured = await countingCpu(server.pid, () => watchingMemory(server.pid, () => apiDownload(server, headers, fileId, size)));
      return { result: measured.result.result, cpuSeconds: measured.cpuSeconds, growthMb: measured.result.growthMb };
    },
  );
  expectStatus(await callJson(server.baseUrl, 'DELETE', `/v1/collections/bench/files/${fileId}`, headers), 204, 'deleting the file');
  return {
    cpu: { baselineUp: upload.baseline.cpuSeconds, apiUp: upload.api.cpuSeconds, baselineDown: download.baseline.cpuSeconds, apiDown: download.api.cpuSeconds },
    baselineUp: upload.baseline.result,
    apiUp: upload.api.result,
    baselineDown: download.baseline.result,
    apiDown: download.api.result,
    growthUpMb: upload.api.growthMb,
    growthDownMb: download.api.growthMb,
  };
}

async function main(): Promise<void> {
  cleanUpOnSignals();
  const size = settings.fileMb * MiB;
  log(`moving ${settings.fileMb} MiB ${settings.runs} time(s) each way, after a warm-up run of the same size`);
  const peer = await startPeer();
  const { server, headers } = await startPlainbase();
  try {
    const expectedSha = sha256Of(size);
    // Warm-up, not counted: one full-size run, so every run counted finds both sides' code
    // compiled and their buffers allocated (after a 16 MiB warm-up, the first 200 MiB upload
    // still used noticeably more CPU than the next ones).
    await oneRun(peer, server, headers, size, expectedSha, false);
    const runs: Run[] = [];
    for (let run = 1; run <= settings.runs; run++) {
      // Which side goes first alternates, so neither always meets what the other left behind.
      const result = await oneRun(peer, server, headers, size, expectedSha, run % 2 === 0);
      log(`run ${run}: up ${fixed(result.apiUp, 2)} s (baseline ${fixed(result.baselineUp, 2)} s), down ${fixed(result.apiDown, 2)} s (baseline ${fixed(result.baselineDown, 2)} s), ` +
        `server CPU ${fixed(result.cpu.apiUp * 1000, 0)} / ${fixed(result.cpu.apiDown * 1000, 0)} ms, RSS +${fixed(result.growthUpMb, 1)} / +${fixed(result.growthDownMb, 1)} MB`);
      runs.push(result);
    }
    const mb = settings.fileMb * (MiB / 1e6);
    const row = (name: string, baseline: number[], api: number[], growth: number[], baselineCpu: number[], apiCpu: number[]) => {
      const ratio = median(baseline) / median(api);
      const worstGrowth = Math.max(...growth);
      return [
        name,
        `${fixed(mb / median(baseline), 0)} MB/s`,
        `${fixed(mb / median(api), 0)} MB/s`,
        fixed(ratio, 2),
        `${ratio >= TARGET.ratio ? 'ok' : 'MISS'} (≥ ${TARGET.ratio})`,
        fixed(median(baseline.map((seconds, run) => seconds / api[run]!)), 2),
        fixed(Math.min(...baseline) / Math.min(...api), 2),
        `${fixed(median(baselineCpu) * 1000, 0)} / ${fixed(median(apiCpu) * 1000, 0)}`,
        fixed(worstGrowth, 1),
        `${worstGrowth < TARGET.memoryGrowthMb ? 'ok' : 'MISS'} (< ${TARGET.memoryGrowthMb})`,
      ];
    };
    const up = row('upload', runs.map((r) => r.baselineUp), runs.map((r) => r.apiUp), runs.map((r) => r.growthUpMb), runs.map((r) => r.cpu.baselineUp), runs.map((r) => r.cpu.apiUp));
    const down = row('download', runs.map((r) => r.baselineDown), runs.map((r) => r.apiDown), runs.map((r) => r.growthDownMb), runs.map((r) => r.cpu.baselineDown), runs.map((r) => r.cpu.apiDown));
    process.stdout.write(`\nFiles: ${settings.fileMb} MiB through the API vs a plain socket copy on loopback (medians of ${settings.runs} runs; ` +
      `best: fastest vs fastest; memory: the worst run). Load average at the end: ${fixed(loadAverage(), 2)} on ${os.availableParallelism()} cores.\n\n`);
    process.stdout.write(`${formatTable(['transfer', 'socket copy', 'Plainbase', 'ratio', 'target', 'paired', 'best ratio', 'CPU ms peer / Plainbase', 'server RSS growth MB', 'target'], [up, down])}\n\n`);
  } finally {
    await server.stop();
  }
}

main()
  .catch((error: unknown) => {
    process.stderr.write(`bench: ${(error as Error).stack ?? String(error)}\n`);
    process.exitCode = 1;
  })
  .finally(() => cleanupAll());
