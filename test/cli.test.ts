import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { request } from 'undici';
import { afterAll, describe, inject, it } from 'vitest';

/**
 * The CLI as a person runs it: `node bin/plainbase.js …` as a real child process, configured only
 * through its environment, in its own temporary folder. Each child takes about a second to
 * load the built program (dist/, built by the global setup), so the tests run concurrently.
 */

const BIN = fileURLToPath(new URL('../bin/plainbase.js', import.meta.url));
const PROCESS_TIMEOUT_MS = 90_000;
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'plainbase-cli-'));
const children = new Set<ChildProcessWithoutNullStreams>();

afterAll(() => {
  for (const child of children) child.kill('SIGKILL');
  fs.rmSync(scratch, { recursive: true, force: true });
});

function freshDir(): string {
  return fs.mkdtempSync(path.join(scratch, 'run-'));
}

/** The parent's environment without any PLAINBASE_* setting, plus the given ones. */
function envWith(settings: Record<string, string>): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('PLAINBASE_')));
  return { ...env, ...settings };
}

/** A free TCP port: the kernel picks one for a moment's listener. */
async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * At most this many children at once: each compiles the app on start, and on a small machine more
 * of them at once only makes every one slower.
 */
const slots = { free: Math.max(3, os.availableParallelism() + 1), waiting: [] as (() => void)[] };

async function acquireSlot(): Promise<() => void> {
  if (slots.free === 0) await new Promise<void>((resolve) => slots.waiting.push(resolve));
  else slots.free--;
  let released = false;
  return () => {
    if (released) return;
    released = true;
    const next = slots.waiting.shift();
    if (next) next();
    else slots.free++;
  };
}

class Child {
  stdout = '';
  stderr = '';
  readonly exited: Promise<number | null>;
  private readonly waiters = new Set<() => void>();

  constructor(readonly process: ChildProcessWithoutNullStreams) {
    children.add(process);
    process.stdout.on('data', (chunk) => this.append('stdout', String(chunk)));
    process.stderr.on('data', (chunk) => this.append('stderr', String(chunk)));
    this.exited = new Promise((resolve) =>
      process.on('exit', (code) => {
        children.delete(process);
        resolve(code);
        this.notify();
      }),
    );
  }

  static async spawn(args: string[], settings: Record<string, string>, cwd: string): Promise<Child> {
    const release = await acquireSlot();
    const child = new Child(spawn(process.execPath, [BIN, ...args], { cwd, env: envWith(settings) }));
    void child.exited.then(release);
    return child;
  }

  /** Resolves when the output so far matches; fails if the process ends or time runs out first. */
  async waitFor(stream: 'stdout' | 'stderr', pattern: RegExp, timeoutMs = PROCESS_TIMEOUT_MS): Promise<RegExpMatchArray> {
    const deadline = setTimeout(() => this.notify(), timeoutMs);
    const started = Date.now();
    try {
      for (;;) {
        const match = this[stream].match(pattern);
        if (match) return match;
        if (this.process.exitCode !== null || Date.now() - started >= timeoutMs) {
          throw new Error(`no ${pattern} on ${stream} (exit ${this.process.exitCode});\nstdout: ${this.stdout}\nstderr: ${this.stderr}`);
        }
        await new Promise<void>((resolve) => this.waiters.add(resolve));
      }
    } finally {
      clearTimeout(deadline);
    }
  }

  /** The exit code; fails if the process is still running after `timeoutMs`. */
  async exitCode(timeoutMs = PROCESS_TIMEOUT_MS): Promise<number | null> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`still running after ${timeoutMs} ms;\nstdout: ${this.stdout}\nstderr: ${this.stderr}`)), timeoutMs);
    });
    try {
      return await Promise.race([this.exited, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  private append(stream: 'stdout' | 'stderr', text: string): void {
    this[stream] += text;
    this.notify();
  }

  private notify(): void {
    for (const waiter of this.waiters) waiter();
    this.waiters.clear();
  }
}

async function runCli(args: string[], settings: Record<string, string>, cwd = freshDir()) {
  const child = await Child.spawn(args, settings, cwd);
  const code = await child.exitCode();
  return { code, stdout: child.stdout, stderr: child.stderr };
}

/** `plainbase serve` on a free port, once it says it runs. */
async function startServer(settings: Record<string, string>, cwd: string) {
  const port = await freePort();
  const child = await Child.spawn(['serve'], { PLAINBASE_PORT: String(port), ...settings }, cwd);
  await child.waitFor('stdout', /"msg":"Plainbase is running"/);
  return { child, port, base: `http://127.0.0.1:${port}` };
}

async function stopServer(child: Child): Promise<number | null> {
  child.process.kill('SIGTERM');
  return child.exitCode(12_000);
}

async function signIn(base: string, email: string, password: string): Promise<number> {
  const response = await fetch(`${base}/v1/auth/sign-in`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password }),
  });
  await response.arrayBuffer();
  return response.status;
}

/** One clear line on stderr, no stack trace, nothing on stdout, a non-zero exit. */
function expectOneLineFailure(expect: any, result: { code: number | null; stdout: string; stderr: string }, prefix: string) {
  const lines = result.stderr.split('\n').filter((line) => line.trim() !== '');
  expect(result.code, result.stderr).not.toBe(0);
  expect(lines, result.stderr).toHaveLength(1);
  expect(lines[0]!.startsWith(prefix), lines[0]).toBe(true);
  expect(result.stderr).not.toMatch(/^\s+at /m);
  expect(result.stdout).toBe('');
}

const OWNER = { email: 'cli-owner@example.com', password: 'cli owner password 1' };

// Generous limits: on a busy machine a child can take many seconds just to load.
describe.concurrent('plainbase CLI', { timeout: 300_000 }, () => {
  it('--help lists the commands', async ({ expect }) => {
    const result = await runCli(['--help'], {});
    expect(result.code).toBe(0);
    for (const command of ['serve', 'migrate', 'create-owner', '--email', '--password']) expect(result.stdout).toContain(command);
    expect(result.stderr).toBe('');
  });

  it('an unknown command or option is one line pointing to --help', async ({ expect }) => {
    const [command, option] = await Promise.all([runCli(['frobnicate'], {}), runCli(['serve', '--frob'], {})]);
    expectOneLineFailure(expect, command, 'plainbase: unknown command "frobnicate"');
    expectOneLineFailure(expect, option, "plainbase: Unknown option '--frob'");
  });

  it('a bad setting stops every command with one line naming the variable', async ({ expect }) => {
    const file = path.join(freshDir(), 'a-file');
    fs.writeFileSync(file, '');
    const withDotEnv = freshDir();
    fs.writeFileSync(path.join(withDotEnv, '.env'), '# read at start\nPLAINBASE_LOG_LEVEL=loud\n');
    const cases: [string[], Record<string, string>, string, string?][] = [
      [['serve'], {}, 'plainbase: PLAINBASE_LOG_LEVEL', withDotEnv],
      [['serve'], { PLAINBASE_PORT: 'abc' }, 'plainbase: PLAINBASE_PORT'],
      [['create-owner', '--email', OWNER.email, '--password', OWNER.password], { PLAINBASE_PORT: '70000' }, 'plainbase: PLAINBASE_PORT'],
      [['serve'], { PLAINBASE_DATA_DIR: path.join(file, 'data') }, 'plainbase: PLAINBASE_DATA_DIR'],
      // Nothing listens on port 1: refused at once, reported without waiting for a timeout.
      [['serve'], { PLAINBASE_DATABASE_URL: 'postgres://postgres:pw@127.0.0.1:1/x' }, 'plainbase: PLAINBASE_DATABASE_URL'],
      [['migrate'], { PLAINBASE_DATABASE_URL: 'postgres://postgres:pw@127.0.0.1:1/x' }, 'plainbase: PLAINBASE_DATABASE_URL'],
    ];
    if (fs.existsSync('/proc/self')) cases.push([['serve'], { PLAINBASE_DATA_DIR: '/proc/plainbase/data' }, 'plainbase: PLAINBASE_DATA_DIR']);
    const results = await Promise.all(cases.map(([args, settings, , cwd]) => runCli(args, settings, cwd)));
    results.forEach((result, i) => expectOneLineFailure(expect, result, cases[i]![2]));
    // The password of a database URL never reaches the terminal.
    expect(results.map((result) => result.stderr).join('')).not.toContain(':pw@');
  });

  it('migrate applies what is missing, then says the database is up to date', async ({ expect }) => {
    const cwd = freshDir();
    const first = await runCli(['migrate'], {}, cwd);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toMatch(/^applied \d+ migration\(s\): 0001-foundation, /);
    // The default data folder is ./data of the current folder, made on demand.
    expect(fs.existsSync(path.join(cwd, 'data', 'plainbase.db'))).toBe(true);
    const second = await runCli(['migrate'], {}, cwd);
    expect(second).toMatchObject({ code: 0, stdout: 'the database is up to date\n', stderr: '' });
  });

  it('create-owner makes an owner who can then sign in over HTTP; the same email twice is one clear line', async ({ expect }) => {
    const cwd = freshDir();
    const created = await runCli(['create-owner', '--email', OWNER.email, '--password', OWNER.password, '--workspace', 'acme'], {}, cwd);
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout).toMatch(/^created cli-owner@example\.com \(per_\w+\), owner of workspace "acme" \(ws_\w+\)\n$/);

    const again = await runCli(['create-owner', '--email', OWNER.email], { PLAINBASE_NEW_OWNER_PASSWORD: OWNER.password }, cwd);
    expectOneLineFailure(expect, again, 'plainbase: A person with this email already exists');

    const server = await startServer({}, cwd);
    try {
      expect(server.child.stdout).not.toContain('/setup?token=');
      expect(await signIn(server.base, OWNER.email, OWNER.password)).toBe(200);
      expect(await signIn(server.base, OWNER.email, 'not the password')).toBe(401);
    } finally {
      expect(await stopServer(server.child)).toBe(0);
    }
  });

  it('serve with nobody yet prints a one-time setup link whose token creates the first owner', async ({ expect }) => {
    const server = await startServer({}, freshDir());
    try {
      const [, link, token] = await server.child.waitFor('stdout', /(http:\/\/127\.0\.0\.1:\d+)\/setup\?token=([\w-]+)/);
      expect(link).toBe(server.base);
      // The link is printed for the person, never written into a log line.
      const logLines = server.child.stdout.split('\n').filter((line) => line.startsWith('{'));
      expect(logLines.length).toBeGreaterThan(0);
      for (const line of logLines) expect(line).not.toContain(token);

      const response = await fetch(`${server.base}/v1/auth/setup`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ token, email: 'first@example.com', name: 'First', password: 'first owner password' }),
      });
      expect(response.status).toBe(201);
      expect(await signIn(server.base, 'first@example.com', 'first owner password')).toBe(200);
    } finally {
      expect(await stopServer(server.child)).toBe(0);
    }
  });

  it('serve with PLAINBASE_OWNER_* creates that owner; starting again on the same data folder works', async ({ expect }) => {
    const cwd = freshDir();
    const settings = { PLAINBASE_OWNER_EMAIL: OWNER.email, PLAINBASE_OWNER_PASSWORD: OWNER.password };
    const first = await startServer(settings, cwd);
    try {
      expect(first.child.stdout).toContain('created the first owner');
      expect(first.child.stdout).not.toContain('/setup?token=');
      expect(await signIn(first.base, OWNER.email, OWNER.password)).toBe(200);
    } finally {
      expect(await stopServer(first.child)).toBe(0);
    }
    expect(first.child.stdout).toContain('"msg":"stopped"');

    const second = await startServer(settings, cwd);
    try {
      expect(second.child.stdout).not.toContain('applied database migrations');
      expect(second.child.stdout).not.toContain('created the first owner');
      expect(await signIn(second.base, OWNER.email, OWNER.password)).toBe(200);
    } finally {
      expect(await stopServer(second.child)).toBe(0);
    }
  });

  it('SIGTERM: new connections are refused, the request in flight gets its answer, exit 0', async ({ expect }) => {
    // At debug level a request is logged when it arrives (`incoming request`), not only when answered.
    const server = await startServer({ PLAINBASE_LOG_LEVEL: 'debug' }, freshDir());
    // A sign-in whose body is still arriving when the signal comes.
    let sendRest!: () => void;
    const body = Readable.from((async function* () {
      yield Buffer.from('{"email":"someone@example.com",');
      await new Promise<void>((resolve) => (sendRest = resolve));
      yield Buffer.from('"password":"not the right one"}');
    })());
    const inFlight = request(`${server.base}/v1/auth/sign-in`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    await server.child.waitFor('stdout', /"url":"\/v1\/auth\/sign-in"[^\n]*"msg":"incoming request"/);

    server.child.process.kill('SIGTERM');
    await server.child.waitFor('stdout', /"msg":"shutting down/);
    // The listener closes right after that line is written; try until a connection is refused.
    let refused = false;
    for (let attempt = 0; attempt < 100 && !refused; attempt++) {
      refused = await new Promise<boolean>((resolve) => {
        const socket = net.connect(server.port, '127.0.0.1');
        socket.once('connect', () => {
          socket.destroy();
          setTimeout(() => resolve(false), 50);
        });
        socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'));
      });
    }
    expect(refused).toBe(true);
    expect(server.child.process.exitCode).toBeNull();

    sendRest();
    const response = await inFlight;
    expect(response.statusCode).toBe(401);
    expect(response.headers.connection).toBe('close');
    expect(((await response.body.json()) as any).error.code).toBe('UNAUTHENTICATED');
    expect(await server.child.exitCode(10_000)).toBe(0);
    expect(server.child.stdout).toContain('"msg":"stopped"');
  });

  it.skipIf(inject('postgresUrl') === null)('two migrate processes at once on one fresh PostgreSQL schema both succeed; each migration runs once', async ({ expect }) => {
    const url = inject('postgresUrl')!;
    const schema = `cli_${randomBytes(6).toString('hex')}`;
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      await admin.query(`create schema ${schema}`);
      const target = `${url}${url.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${schema}`)}`;
      const results = await Promise.all([0, 1].map(() => runCli(['migrate'], { PLAINBASE_DATABASE_URL: target })));
      for (const result of results) expect(result.code, result.stderr).toBe(0);
      const applied = results.flatMap((result) => /^applied \d+ migration\(s\): (.*)$/m.exec(result.stdout)?.[1]?.split(', ') ?? []);
      expect(applied).toContain('0001-foundation');
      const { rows } = await admin.query(`select name, count(*)::int as runs from ${schema}.plainbase_migrations group by name order by name`);
      expect(rows.map((row) => row.name)).toEqual([...applied].sort());
      expect(rows.every((row) => row.runs === 1)).toBe(true);
    } finally {
      await admin.query(`drop schema if exists ${schema} cascade`);
      await admin.end();
    }
  });
});
