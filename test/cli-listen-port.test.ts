import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';

/** `plainbase listen` without --url goes to the server on this machine, at PLAINBASE_PORT. */
const BIN = fileURLToPath(new URL('../bin/plainbase.js', import.meta.url));

// A bare HTTP server on the port, refusing the key: where the CLI knocks is what is tested.
const asked: string[] = [];
const server = createServer((request, response) => {
  asked.push(request.url ?? '');
  response.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { code: 'UNAUTHENTICATED', message: 'Unknown key.' } }));
});
let port: number;
beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

function listen(env: Record<string, string>, cwd = os.tmpdir()): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [BIN, 'listen', '--print'], { cwd, env: { ...process.env, PLAINBASE_PORT: '', PLAINBASE_KEY: 'pb_test_not_a_real_key', ...env } });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  return new Promise((resolve) => child.once('exit', (code) => {
    clearTimeout(timer);
    resolve({ code, stderr });
  }));
}

it('asks the server at PLAINBASE_PORT, from the environment or ./.env', async () => {
  const fromEnv = await listen({ PLAINBASE_PORT: String(port) });
  expect(asked.filter((url) => url.startsWith('/v1/events/stream'))).toHaveLength(1);
  expect(fromEnv.code).toBe(1);

  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'plainbase-listen-port-'));
  try {
    fs.writeFileSync(path.join(folder, '.env'), `PLAINBASE_PORT=${port}\n`);
    await listen({}, folder);
    expect(asked.filter((url) => url.startsWith('/v1/events/stream'))).toHaveLength(2);
  } finally {
    fs.rmSync(folder, { recursive: true, force: true });
  }
});

it('a PLAINBASE_PORT that is no port is one line naming it', async () => {
  const result = await listen({ PLAINBASE_PORT: 'eighty' });
  expect(result.code).toBe(1);
  expect(result.stderr).toBe('plainbase: PLAINBASE_PORT must be a port number from 1 to 65535 (got "eighty"); or pass --url\n');
});
