import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, it } from 'vitest';
import { freePort, portAccepts } from './support/server-process.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'plainbase-npm-start-'));
afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

// What the README tells a person to run and a supervisor to signal. npm runs the script under
// `sh -c`; without `exec` the shell died of the signal and the server kept running, port and all.
it('SIGTERM to `npm start` stops the server: the port closes and the process exits within 10 s', async () => {
  const port = await freePort();
  const child = spawn('npm', ['start', '--silent'], {
    cwd: ROOT,
    env: {
      ...process.env,
      PLAINBASE_PORT: String(port),
      PLAINBASE_HOST: '127.0.0.1',
      PLAINBASE_DATABASE_URL: `sqlite:${path.join(dataDir, 'plainbase.db')}`,
      PLAINBASE_DATA_DIR: dataDir,
      PLAINBASE_LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  try {
    let healthy = false;
    for (let attempt = 0; attempt < 300 && !healthy && child.exitCode === null; attempt++) {
      healthy = await fetch(`http://127.0.0.1:${port}/healthz`).then((response) => response.ok, () => false);
      if (!healthy) await sleep(100); // waiting for the process to start
    }
    expect(healthy, output).toBe(true);

    const signalled = Date.now();
    child.kill('SIGTERM');
    const code = await Promise.race([exited, sleep(10_000).then(() => 'still running' as const)]);
    expect(code, output).toBe(0);
    // npm's exit is not enough: the server it started must be gone too, its port with it.
    let open = true;
    while (open && Date.now() - signalled < 10_000) {
      open = await portAccepts(port);
      if (open) await sleep(100);
    }
    expect(open).toBe(false);
    expect(Date.now() - signalled).toBeLessThan(10_000);
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
  }
}, 60_000);
