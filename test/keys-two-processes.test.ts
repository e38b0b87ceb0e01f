import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';

/**
 * DESIGN.md §1: several processes on one PostgreSQL must be correct, and a revoked key is refused
 * by every process on its next request. Two real servers (`node bin/plainbase.js serve`) share a
 * fresh database; a change made through A must hold on B's very next request. No process caches
 * a key, so there is nothing to wait for: the test never sleeps between the change and the check.
 */
const postgresUrl = inject('postgresUrl');
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const OWNER = { email: 'owner@example.com', password: 'correct horse battery' };

interface Server {
  base: string;
  child: ChildProcess;
  output: string[];
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

async function startServer(databaseUrl: string, dataDir: string): Promise<Server> {
  const port = await freePort();
  const child = spawn(process.execPath, ['bin/plainbase.js', 'serve'], {
    cwd: ROOT,
    env: {
      ...process.env,
      PLAINBASE_DATABASE_URL: databaseUrl,
      PLAINBASE_PORT: String(port),
      PLAINBASE_HOST: '127.0.0.1',
      PLAINBASE_OWNER_EMAIL: OWNER.email,
      PLAINBASE_OWNER_PASSWORD: OWNER.password,
      PLAINBASE_LOG_LEVEL: 'warn',
      PLAINBASE_RATE_LIMIT_PER_KEY: '0',
      PLAINBASE_RATE_LIMIT_PER_IP: '0',
      PLAINBASE_DATA_DIR: dataDir,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const server: Server = { base: `http://127.0.0.1:${port}`, child, output: [] };
  child.stdout!.on('data', (chunk: Buffer) => server.output.push(chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => server.output.push(chunk.toString()));
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`server exited (${child.exitCode}):\n${server.output.join('')}`);
    try {
      const response = await fetch(`${server.base}/readyz`);
      if (response.ok) return server;
    } catch {
      // not listening yet
    }
    await sleep(100); // waiting for a process to start, not for time to pass in the test
  }
  child.kill('SIGKILL');
  throw new Error(`server not ready within 60 s:\n${server.output.join('')}`);
}

async function stopServer(server: Server | undefined): Promise<void> {
  if (!server || server.child.exitCode !== null) return;
  const exited = new Promise((resolve) => server.child.once('exit', resolve));
  server.child.kill('SIGTERM');
  const timer = setTimeout(() => server.child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

/** A browser-like caller of one server: a session cookie and a workspace, or a key. */
async function call(base: string, method: string, url: string, headers: Record<string, string>, body?: unknown): Promise<{ status: number; body: any; headers: Headers }> {
  const response = await fetch(`${base}${url}`, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text && (response.headers.get('content-type') ?? '').includes('json') ? JSON.parse(text) : text, headers: response.headers };
}

function sessionHeaders(reply: { body: any; headers: Headers }, workspaceId?: string): Record<string, string> {
  const cookie = reply.headers.getSetCookie().map((line) => line.split(';')[0]!).find((pair) => pair.startsWith('plainbase_session='));
  if (!cookie) throw new Error(`no session cookie: ${JSON.stringify(reply.body)}`);
  return { cookie, 'x-baas-workspace': workspaceId ?? reply.body.workspaces[0].id };
}

describe.skipIf(postgresUrl === null)('API keys across two server processes [postgres]', () => {
  const database = `plainbase_two_${randomBytes(5).toString('hex')}`;
  const adminUrl = postgresUrl ?? '';
  let dataDir: string;
  let a: Server | undefined;
  let b: Server | undefined;
  let owner: Record<string, string>;

  const admin = async (sql: string) => {
    const client = new pg.Client({ connectionString: adminUrl });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };

  beforeAll(async () => {
    await admin(`create database ${database}`);
    const url = new URL(adminUrl);
    url.pathname = `/${database}`;
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'plainbase-two-'));
    // One after the other: A migrates the fresh database and creates the owner; B finds both done.
    a = await startServer(url.toString(), path.join(dataDir, 'a'));
    b = await startServer(url.toString(), path.join(dataDir, 'b'));
    const signIn = await call(a.base, 'POST', '/v1/auth/sign-in', {}, OWNER);
    expect(signIn.status).toBe(200);
    owner = sessionHeaders(signIn);
  }, 150_000);

  afterAll(async () => {
    await Promise.all([stopServer(a), stopServer(b)]);
    await admin(`drop database if exists ${database} with (force)`);
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  }, 60_000);

  it('a key made on A works on B; revoked on A, it is refused by B on the next request', async () => {
    const created = await call(a!.base, 'POST', '/v1/keys', owner, { name: 'shared', scopes: ['collections:read'] });
    expect(created.status).toBe(201);
    const key = { authorization: `Bearer ${created.body.secret}` };
    expect((await call(b!.base, 'GET', '/v1/me', key)).status).toBe(200);
    expect((await call(b!.base, 'GET', '/v1/collections', key)).status).toBe(200);

    expect((await call(a!.base, 'POST', `/v1/keys/${created.body.id}/revoke`, owner)).status).toBe(200);
    const refused = await call(b!.base, 'GET', '/v1/collections', key);
    expect(refused.status).toBe(401);
    expect(refused.body.error.code).toBe('INVALID_API_KEY');
    expect((await call(a!.base, 'GET', '/v1/me', key)).status).toBe(401);
  });

  it('rotated with grace 0 on A, the old secret is refused by B at once and the new one works there', async () => {
    const created = await call(a!.base, 'POST', '/v1/keys', owner, { name: 'rotating', scopes: ['collections:read'] });
    const old = { authorization: `Bearer ${created.body.secret}` };
    expect((await call(b!.base, 'GET', '/v1/me', old)).status).toBe(200);
    const rotated = await call(a!.base, 'POST', `/v1/keys/${created.body.id}/rotate`, owner, { gracePeriodSeconds: 0 });
    expect(rotated.status).toBe(200);
    const refused = await call(b!.base, 'GET', '/v1/me', old);
    expect(refused.status).toBe(401);
    expect(refused.body.error.code).toBe('INVALID_API_KEY');
    expect((await call(b!.base, 'GET', '/v1/me', { authorization: `Bearer ${rotated.body.secret}` })).status).toBe(200);
  });

  it("demoting the creator on A shrinks the key's effective scopes on B at once", async () => {
    const invite = await call(a!.base, 'POST', '/v1/invites', owner, { email: 'ed@example.com', role: 'editor' });
    expect(invite.status).toBe(201);
    const accepted = await call(a!.base, 'POST', `/v1/invites/${invite.body.token}/accept`, {}, { name: 'Ed', password: 'member password 1' });
    expect(accepted.status).toBe(200);
    const editor = sessionHeaders(accepted, owner['x-baas-workspace']);
    const created = await call(a!.base, 'POST', '/v1/keys', editor, { name: 'editor key', scopes: ['records:read', 'records:create'] });
    expect(created.status).toBe(201);
    const key = { authorization: `Bearer ${created.body.secret}` };
    expect((await call(b!.base, 'GET', '/v1/me', key)).body.effectiveScopes).toEqual(['records:read', 'records:create']);

    expect((await call(a!.base, 'PATCH', `/v1/members/${accepted.body.person.id}`, owner, { role: 'viewer' })).status).toBe(200);
    const me = await call(b!.base, 'GET', '/v1/me', key);
    expect(me.status).toBe(200);
    expect(me.body.effectiveScopes).toEqual(['records:read']);
    expect(me.body.suppressed).toEqual([{ scope: 'records:create', reason: expect.stringContaining('viewer') }]);
    await call(a!.base, 'POST', '/v1/collections', owner, { name: 'leads' });
    const write = await call(b!.base, 'POST', '/v1/collections/leads/records', key, { data: {} });
    expect(write.status).toBe(403);
    expect(write.body.error.code).toBe('MISSING_SCOPE');
  });
});
