import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import type { Engine } from '../../src/db/dialect.js';
import { CHEAP_PASSWORD_HASHES } from './cheap-password-hashes.js';

/**
 * The real service as a child process (`node bin/plainbase.js serve`), for tests about what only
 * separate processes show: several servers on one database, a kill -9, the printed setup link.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export const OWNER = { email: 'owner@example.com', password: 'correct horse battery' };

export interface ServerProcess {
  base: string;
  child: ChildProcess;
  /** Everything the process printed, stdout and stderr, in order. */
  output: string[];
  exited: Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** Whether something accepts connections on the loopback port. */
export function portAccepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/**
 * Starts a server with the owner bootstrapped and rate limits off; `env` adds or overrides
 * variables. Resolves once /readyz answers 200, or for a worker-only process
 * (`PLAINBASE_API: 'off'`, which serves no HTTP) once it logs that it is running.
 */
export async function startServer(env: Record<string, string>, readyWithinMs = 90_000): Promise<ServerProcess> {
  const port = await freePort();
  // A data folder of its own in the temp folder unless the test gives one: the default, ./data
  // beside the checkout, is the developer's.
  const ownDataDir = env.PLAINBASE_DATA_DIR === undefined ? fs.mkdtempSync(path.join(os.tmpdir(), 'plainbase-server-data-')) : null;
  const child = spawn(process.execPath, ['bin/plainbase.js', 'serve'], {
    cwd: ROOT,
    env: {
      ...process.env,
      PLAINBASE_PORT: String(port),
      PLAINBASE_HOST: '127.0.0.1',
      PLAINBASE_OWNER_EMAIL: OWNER.email,
      PLAINBASE_OWNER_PASSWORD: OWNER.password,
      // A worker-only process says it is running at info level: the one sign of readiness it gives.
      PLAINBASE_LOG_LEVEL: env.PLAINBASE_API === 'off' ? 'info' : 'warn',
      PLAINBASE_RATE_LIMIT_PER_KEY: '0',
      PLAINBASE_RATE_LIMIT_PER_IP: '0',
      ...CHEAP_PASSWORD_HASHES,
      ...(ownDataDir ? { PLAINBASE_DATA_DIR: ownDataDir } : {}),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((resolve) =>
    child.once('exit', () => {
      if (ownDataDir) fs.rmSync(ownDataDir, { recursive: true, force: true });
      resolve();
    }),
  );
  const server: ServerProcess = { base: `http://127.0.0.1:${port}`, child, output: [], exited };
  child.stdout!.on('data', (chunk: Buffer) => server.output.push(chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => server.output.push(chunk.toString()));
  const deadline = Date.now() + readyWithinMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`server exited (${child.exitCode}):\n${server.output.join('')}`);
    if (env.PLAINBASE_API === 'off') {
      if (server.output.join('').includes('"msg":"Plainbase is running"')) return server;
    } else {
      try {
        const response = await fetch(`${server.base}/readyz`);
        if (response.ok) return server;
      } catch {
        // not listening yet
      }
    }
    await sleep(100); // waiting for a process to start, not for time to pass in the test
  }
  child.kill('SIGKILL');
  throw new Error(`server not ready within ${readyWithinMs / 1000} s:\n${server.output.join('')}`);
}

/** SIGTERM, then SIGKILL if the server has not stopped within 10 s. */
export async function stopServer(server: ServerProcess | undefined): Promise<void> {
  if (!server || server.child.exitCode !== null || server.child.signalCode !== null) return;
  server.child.kill('SIGTERM');
  const timer = setTimeout(() => server.child.kill('SIGKILL'), 10_000);
  await server.exited;
  clearTimeout(timer);
}

export interface Reply {
  status: number;
  body: any;
  headers: Headers;
}

export async function call(base: string, method: string, url: string, headers: Record<string, string>, body?: unknown): Promise<Reply> {
  const response = await fetch(`${base}${url}`, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  const json = text && (response.headers.get('content-type') ?? '').includes('json');
  return { status: response.status, body: json ? JSON.parse(text) : text, headers: response.headers };
}

/** The headers of a signed-in caller, from the answer to sign-in or to accepting an invite. */
export function sessionHeaders(reply: Reply, workspaceId?: string): Record<string, string> {
  const cookie = reply.headers.getSetCookie().map((line) => line.split(';')[0]!).find((pair) => pair.startsWith('plainbase_session='));
  if (!cookie) throw new Error(`no session cookie: ${JSON.stringify(reply.body)}`);
  return { cookie, 'x-baas-workspace': workspaceId ?? reply.body.workspaces[0].id };
}

export async function signInOwner(base: string): Promise<Record<string, string>> {
  const reply = await call(base, 'POST', '/v1/auth/sign-in', {}, OWNER);
  if (reply.status !== 200) throw new Error(`sign-in answered ${reply.status}: ${JSON.stringify(reply.body)}`);
  return sessionHeaders(reply);
}

/** Every row of a cursor-paged list. */
export async function listAll(base: string, url: string, headers: Record<string, string>): Promise<any[]> {
  const rows: any[] = [];
  let cursor: string | null = null;
  do {
    const reply = await call(base, 'GET', `${url}${url.includes('?') ? '&' : '?'}limit=1000${cursor ? `&cursor=${cursor}` : ''}`, headers);
    if (reply.status !== 200) throw new Error(`${url} answered ${reply.status}: ${JSON.stringify(reply.body)}`);
    rows.push(...reply.body.data);
    cursor = reply.body.nextCursor;
  } while (cursor);
  return rows;
}

/** A fresh PostgreSQL database of its own, for servers that must share one from the start. */
export async function createDatabase(adminUrl: string, prefix: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `${prefix}_${randomBytes(5).toString('hex')}`;
  const admin = async (sql: string) => {
    const client = new pg.Client({ connectionString: adminUrl });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await admin(`create database ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => admin(`drop database if exists ${name} with (force)`) };
}

/** What a CLI command did: its exit code and everything it printed. */
export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs the real CLI (`node bin/plainbase.js …args`) to its end, with none of this process's
 * PLAINBASE_ variables but those of `settings`; `stdin` is written to it and closed.
 */
export function runCli(args: string[], settings: Record<string, string>, stdin = ''): Promise<CliRun> {
  const env = { ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('PLAINBASE_'))), ...CHEAP_PASSWORD_HASHES, ...settings };
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [path.join(ROOT, 'bin/plainbase.js'), ...args], { env, timeout: 90_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
    child.stdin!.end(stdin);
  });
}

/**
 * A database of its own, for a server and the CLI run beside it on the same data: a data folder
 * in the temp folder on SQLite, a fresh database on PostgreSQL. `cleanup` removes it.
 */
export async function ownDatabase(engine: Engine, prefix: string, postgresUrl: string | null): Promise<{ settings: Record<string, string>; cleanup: () => Promise<void> }> {
  if (engine === 'sqlite') {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), `plainbase-${prefix}-`));
    return { settings: { PLAINBASE_DATA_DIR: dir }, cleanup: async () => fs.rmSync(dir, { recursive: true, force: true }) };
  }
  const database = await createDatabase(postgresUrl!, prefix.replaceAll('-', '_'));
  return { settings: { PLAINBASE_DATABASE_URL: database.url }, cleanup: database.drop };
}
