import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * What the benchmark must undo, newest first: servers to stop, temp dirs to remove, databases
 * to drop. Run at the end and on Ctrl-C, so nothing outlives the bench.
 */
const cleanups: { label: string; run: () => Promise<void> | void }[] = [];

export function onCleanup(label: string, run: () => Promise<void> | void): () => void {
  const entry = { label, run };
  cleanups.push(entry);
  return () => {
    const at = cleanups.indexOf(entry);
    if (at >= 0) cleanups.splice(at, 1);
  };
}

export async function cleanupAll(): Promise<void> {
  while (cleanups.length > 0) {
    const entry = cleanups.pop()!;
    try {
      await entry.run();
    } catch (error) {
      process.stderr.write(`bench: cleanup of ${entry.label} failed: ${(error as Error).message}\n`);
    }
  }
}

let interrupted = false;

/** True once Ctrl-C (or SIGTERM) arrived: what runs after that is not worth reporting. */
export const isInterrupted = (): boolean => interrupted;

/** Ctrl-C or SIGTERM: undo everything, then exit 130/143. A second signal exits at once. */
export function cleanUpOnSignals(): void {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      if (interrupted) process.exit(1);
      interrupted = true;
      process.stderr.write(`\nbench: ${signal}: stopping servers, removing temp data…\n`);
      void cleanupAll().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
    });
  }
}

export function makeTempDir(prefix: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  onCleanup(`temp dir ${dir}`, () => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export interface Server {
  name: string;
  pid: number;
  baseUrl: string;
  /** Date.now() when the process was spawned: phase times in a CPU profile are counted from here. */
  startedAt: number;
  child: ChildProcess;
  /** The last lines the process wrote, for the error message when it dies. */
  output(): string;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves when the process is gone. */
  stop(graceMs?: number): Promise<void>;
}

/**
 * Starts `node <args>` as its own process (so the load generator never shares its event loop),
 * and waits until `readyPath` answers 200, or, for a process that serves no HTTP, until it
 * prints `readyOutput`.
 */
export async function startServer(options: {
  name: string;
  args: string[];
  env: Record<string, string>;
  port: number;
  readyPath: string | { output: string };
  readyTimeoutMs?: number;
  /** How often to ask `readyPath` while waiting (100 ms); bench:startup asks often to time the start. */
  pollMs?: number;
}): Promise<Server> {
  if (interrupted) throw new Error('interrupted');
  const startedAt = Date.now();
  const child = spawn(process.execPath, options.args, {
    cwd: process.cwd(),
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  let printedReady = false;
  const keep = (chunk: Buffer) => {
    const text = chunk.toString('utf8');
    if (typeof options.readyPath === 'object' && text.includes(options.readyPath.output)) printedReady = true;
    lines.push(...text.split('\n').filter(Boolean));
    if (lines.length > 40) lines.splice(0, lines.length - 40);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  let exited: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  const exit = new Promise<void>((resolve) => {
    child.once('exit', (code, signal) => {
      exited = { code, signal };
      resolve();
    });
  });

  const stop = async (graceMs = 15_000) => {
    if (exited) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    await exit;
    clearTimeout(timer);
  };
  const removeCleanup = onCleanup(`${options.name} (pid ${child.pid})`, () => stop(5000));

  const server: Server = {
    name: options.name,
    pid: child.pid!,
    baseUrl: `http://127.0.0.1:${options.port}`,
    startedAt,
    child,
    output: () => lines.join('\n'),
    stop: async (graceMs) => {
      await stop(graceMs);
      removeCleanup();
    },
  };

  const deadline = Date.now() + (options.readyTimeoutMs ?? 120_000);
  while (Date.now() < deadline) {
    if (exited) {
      throw new Error(`${options.name} exited during start (${JSON.stringify(exited)}):\n${server.output()}`);
    }
    if (typeof options.readyPath === 'object') {
      if (printedReady) return server;
    } else {
      try {
        const response = await fetch(`${server.baseUrl}${options.readyPath}`);
        await response.arrayBuffer();
        if (response.ok) return server;
      } catch {
        // not listening yet
      }
    }
    await sleep(options.pollMs ?? 100);
  }
  await server.stop(2000);
  throw new Error(`${options.name} was not ready within ${options.readyTimeoutMs ?? 120_000} ms:\n${server.output()}`);
}
