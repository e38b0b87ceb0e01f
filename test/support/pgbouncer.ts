import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort, portAccepts } from './server-process.js';

/**
 * A real PgBouncer in front of the test PostgreSQL: Debian's package (`apt-get install -y
 * pgbouncer`; .ci/run installs it when missing), started as the test's own process with a
 * temporary ini and userlist on a free loopback port. The issue it serves (managed PostgreSQL's
 * transaction-mode poolers) is about pool_mode=transaction; a small pool makes the sessions
 * rotate between clients as they do in production.
 */
export const PGBOUNCER = process.env.PLAINBASE_TEST_PGBOUNCER ?? '/usr/sbin/pgbouncer';

/** Whether PgBouncer can run here; in CI (CI=true) its absence is a failure, elsewhere a loud skip. */
export function pgbouncerAvailable(): boolean {
  if (spawnSync(PGBOUNCER, ['--version']).status === 0) return true;
  const reason = `pgbouncer is not installed at ${PGBOUNCER}: run \`apt-get install -y pgbouncer\` (.ci/run does it when missing)`;
  if (process.env.CI === 'true') throw new Error(`${reason}; the pooler tests are required here.`);
  console.warn(`\n*** ${reason}: SKIPPING the pooler tests. ***\n`);
  return false;
}

export interface PgBouncer {
  /** The upstream URL with PgBouncer's host and port in place of the server's. */
  url: string;
  port: number;
  /** Everything PgBouncer printed so far. */
  log(): string;
  stop(): Promise<void>;
}

export interface PgBouncerOptions {
  poolMode: 'session' | 'transaction' | 'statement';
  poolSize: number;
  /** postgres://user@host:port/database of the server; PgBouncer serves that database under the same name. */
  upstream: string;
}

export async function startPgBouncer({ poolMode, poolSize, upstream }: PgBouncerOptions): Promise<PgBouncer> {
  const server = new URL(upstream);
  const database = server.pathname.slice(1) || 'postgres';
  const user = decodeURIComponent(server.username || 'postgres');
  const dir = await mkdtemp(path.join(os.tmpdir(), 'plainbase-pgbouncer-'));
  // PgBouncer will not run as root: it drops to `user` below, who must still read these files.
  await chmod(dir, 0o755);
  const port = await freePort();
  const ini = `
[databases]
${database} = host=${server.hostname} port=${server.port || 5432} dbname=${database}

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = ${port}
unix_socket_dir =
auth_type = trust
auth_file = ${dir}/userlist.txt
pool_mode = ${poolMode}
default_pool_size = ${poolSize}
min_pool_size = 0
reserve_pool_size = 0
max_client_conn = 500
server_reset_query =
ignore_startup_parameters = extra_float_digits
log_connections = 0
log_disconnections = 0
${process.getuid?.() === 0 ? 'user = postgres' : ''}
`;
  await writeFile(path.join(dir, 'pgbouncer.ini'), ini, { mode: 0o644 });
  await writeFile(path.join(dir, 'userlist.txt'), `"${user}" ""\n`, { mode: 0o644 });
  const output: string[] = [];
  const child: ChildProcess = spawn(PGBOUNCER, [path.join(dir, 'pgbouncer.ini')], { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout!.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    }
    await rm(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 10_000;
  while (!(await portAccepts(port))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`pgbouncer did not start:\n${output.join('')}`);
    }
    await sleep(50); // waiting for a process to start listening, not for time to pass in the test
  }
  const url = new URL(upstream);
  url.hostname = '127.0.0.1';
  url.port = String(port);
  return { url: url.toString(), port, log: () => output.join(''), stop };
}
