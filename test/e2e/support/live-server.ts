import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { inject } from 'vitest';
import { CHEAP_PASSWORD_HASHES } from '../../support/cheap-password-hashes.js';

/**
 * The real service as a person runs it (`bin/plainbase.js serve`), on loopback, on SQLite in a
 * fresh temporary data folder, with the setup token read from the link it prints.
 */

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

export interface LiveServer {
  baseUrl: string;
  /** The token of the printed setup link; null when the server was started with an owner. */
  setupToken: string | null;
  dataDir: string;
  /** Everything the process wrote so far (its JSON log lines and the setup link), for failures. */
  output(): string;
  stop(): Promise<void>;
}

/** A port nobody listens on now; the server takes it a moment later. */
async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

/**
 * Starts the service and waits until it listens. `env` adds or overrides PLAINBASE_* variables
 * (for example PLAINBASE_WEBHOOK_ALLOW_PRIVATE=1 for a receiver on loopback).
 */
export async function startLiveServer(env: Record<string, string> = {}): Promise<LiveServer> {
  const buildError = inject('dashboardBuildError');
  if (buildError) throw new Error(`the dashboard did not build, so there is nothing to test:\n${buildError}`);
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'plainbase-e2e-'));
  // Only our own PLAINBASE_* variables: the test run's environment must not change the service.
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('PLAINBASE_')));
  const child = spawn(process.execPath, [path.join(ROOT, 'bin', 'plainbase.js'), 'serve'], {
    cwd: ROOT,
    env: {
      ...inherited,
      PLAINBASE_HOST: '127.0.0.1',
      PLAINBASE_PORT: String(port),
      PLAINBASE_PUBLIC_URL: baseUrl,
      PLAINBASE_DATA_DIR: dataDir,
      PLAINBASE_ENV: 'development',
      PLAINBASE_LOG_LEVEL: 'warn',
      PLAINBASE_SIGN_IN_SLOWDOWN_MS: '0',
      ...CHEAP_PASSWORD_HASHES,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));

  const stop = () => stopProcess(child, dataDir);
  try {
    const setupToken = await waitUntilReady(child, baseUrl, () => output, 'PLAINBASE_OWNER_EMAIL' in env);
    return { baseUrl, setupToken, dataDir, output: () => output, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

async function waitUntilReady(child: ChildProcess, baseUrl: string, output: () => string, hasOwner: boolean): Promise<string | null> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the server exited with ${child.exitCode} before it was ready:\n${output()}`);
    const token = /\/setup\?token=([A-Za-z0-9_-]+)/.exec(output())?.[1] ?? null;
    if (token || hasOwner) {
      const ready = await fetch(`${baseUrl}/readyz`).then((response) => response.ok, () => false);
      if (ready) return token;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`the server was not ready within 20 s:\n${output()}`);
}

async function stopProcess(child: ChildProcess, dataDir: string): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  }
  fs.rmSync(dataDir, { recursive: true, force: true });
}
