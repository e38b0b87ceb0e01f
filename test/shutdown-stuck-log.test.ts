import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort, OWNER } from './support/server-process.js';

/**
 * SIGTERM ends the server within its bound (docs/operations.md: 10 s) whatever its log's reader
 * does. The server runs as a real child process whose stdout is a pipe nobody reads: after a load
 * has filled the pipe, the process must keep answering, and then stop on SIGTERM. Before the fix
 * it answered, but its exit flushed the log synchronously, retrying the full pipe for ever, and
 * only SIGKILL ended it. (One server and one loading client suffice: what is tested is the
 * process's own exit, not anything shared between callers.)
 */
const ROOT = fileURLToPath(new URL('..', import.meta.url));

describe('shutdown with a log nobody reads', () => {
  let child: ReturnType<typeof spawn> | undefined;
  let dataDir: string | undefined;
  afterEach(() => {
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('fills the stdout pipe under load, keeps answering, and exits on SIGTERM within 10 s', async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'plainbase-stuck-log-'));
    const port = await freePort();
    const server = spawn(process.execPath, ['bin/plainbase.js', 'serve'], {
      cwd: ROOT,
      env: {
        ...process.env,
        PLAINBASE_PORT: String(port),
        PLAINBASE_HOST: '127.0.0.1',
        PLAINBASE_DATA_DIR: dataDir,
        // Every probe writes two log lines at debug (at info a probe writes none): the load fills the pipe quickly.
        PLAINBASE_LOG_LEVEL: 'debug',
        PLAINBASE_RATE_LIMIT_PER_IP: '0',
        PLAINBASE_RATE_LIMIT_PER_KEY: '0',
        PLAINBASE_OWNER_EMAIL: OWNER.email,
        PLAINBASE_OWNER_PASSWORD: OWNER.password,
      },
      // stdout: a pipe this test never reads (no listener, never resumed).
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    child = server;
    const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) => server.once('exit', (code, signal) => resolve({ code, signal })));
    const base = `http://127.0.0.1:${port}`;

    for (let waited = 0; ; waited += 100) {
      if (server.exitCode !== null) throw new Error(`the server exited (${server.exitCode}) before it was ready`);
      if (waited > 90_000) throw new Error('the server was not ready within 90 s');
      const ready = await fetch(`${base}/readyz`).then((reply) => reply.ok, () => false);
      if (ready) break;
      await sleep(100); // waiting for a process to start
    }

    // Load: far more log than a pipe holds (64 KiB): 10 clients, 3 s.
    let answered = 0;
    let failed = 0;
    const until = Date.now() + 3000;
    await Promise.all(Array.from({ length: 10 }, async () => {
      while (Date.now() < until) {
        const ok = await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(2000) }).then((reply) => reply.ok, () => false);
        if (ok) answered += 1;
        else failed += 1;
      }
    }));
    expect(failed).toBe(0);
    expect(answered).toBeGreaterThan(1000);
    // The pipe is full: the server's log is waiting on a reader that never comes.
    expect(server.stdout!.readableLength).toBeGreaterThan(0);
    // Still answering with it full.
    expect((await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(2000) })).status).toBe(200);

    const signalled = performance.now();
    server.kill('SIGTERM');
    const outcome = await Promise.race([exited, sleep(15_000).then(() => null)]);
    const seconds = (performance.now() - signalled) / 1000;
    console.info(`exit ${JSON.stringify(outcome)} ${seconds.toFixed(2)} s after SIGTERM`);
    expect(outcome, 'the server was still running 15 s after SIGTERM').not.toBeNull();
    expect(seconds).toBeLessThan(10.5);
    expect(outcome).toEqual({ code: 0, signal: null });
  }, 150_000);
});
