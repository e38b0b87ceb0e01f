import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startServer, stopServer, type ServerProcess } from './support/server-process.js';

/** The JSON log lines the process has written so far. */
function logLines(server: ServerProcess): Record<string, any>[] {
  return server.output
    .join('')
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, any>);
}

/** Waits for the request line of a request id: it is written once the answer has gone out. */
async function requestLine(server: ServerProcess, requestId: string): Promise<Record<string, any>[]> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const lines = logLines(server).filter((line) => line.reqId === requestId && line.msg === 'request completed');
    if (lines.length > 0) return lines;
    await sleep(50); // waiting for the child to write its line, not for time to pass
  }
  throw new Error(`no request line for ${requestId}:\n${server.output.join('')}`);
}

// The real service as a child process, read from its stdout: what an operator's log shipper sees.
describe('request log lines of the running service', () => {
  let dataDir: string;
  let info: ServerProcess;
  let debug: ServerProcess;
  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'plainbase-request-log-'));
    // Behind one proxy: the address logged is the one X-Forwarded-For gives, as for every per-address limit.
    [info, debug] = await Promise.all([
      startServer({ PLAINBASE_DATA_DIR: path.join(dataDir, 'info'), PLAINBASE_LOG_LEVEL: 'info', PLAINBASE_TRUST_PROXY: '1' }),
      startServer({ PLAINBASE_DATA_DIR: path.join(dataDir, 'debug'), PLAINBASE_LOG_LEVEL: 'debug' }),
    ]);
  }, 120_000);
  afterAll(async () => {
    await Promise.all([stopServer(info), stopServer(debug)]);
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('one line per request with method, URL, route pattern, trusted client address, status and time', async () => {
    const response = await fetch(`${info.base}/v1/collections/col_nothing/records?limit=2`, { headers: { 'x-forwarded-for': '203.0.113.9' } });
    expect(response.status).toBe(401);
    const lines = await requestLine(info, response.headers.get('x-request-id')!);
    expect(lines).toHaveLength(1);
    const [line] = lines;
    expect(line).toMatchObject({
      level: 30,
      req: { method: 'GET', url: '/v1/collections/col_nothing/records?limit=2', route: '/v1/collections/:col/records', remoteAddress: '203.0.113.9' },
      res: { statusCode: 401 },
    });
    expect(line!.responseTime).toEqual(expect.any(Number));
    // No other line of that request: Fastify's own pair is off.
    expect(logLines(info).filter((other) => other.reqId === line!.reqId)).toHaveLength(1);
  });

  it('without a proxy the address is the connection\'s', async () => {
    const response = await fetch(`${debug.base}/v1/openapi.json`, { headers: { 'x-forwarded-for': '203.0.113.9' } });
    const [line] = await requestLine(debug, response.headers.get('x-request-id')!);
    expect(line!.req).toMatchObject({ route: '/v1/openapi.json', remoteAddress: '127.0.0.1' });
    expect(line!.level).toBe(30);
  });

  it('health probes and scrapes log at debug, not info', async () => {
    const ids: string[] = [];
    for (const server of [info, debug]) {
      for (const probe of ['/healthz', '/readyz', '/metrics']) {
        const response = await fetch(`${server.base}${probe}`);
        expect(response.status).toBe(200);
        ids.push(response.headers.get('x-request-id')!);
      }
    }
    // At debug they are there, at level 20.
    for (const id of ids.slice(3)) expect((await requestLine(debug, id)).map((line) => line.level)).toEqual([20]);
    // At info: a later request's line is written, the probes' never were.
    const later = await fetch(`${info.base}/v1/openapi.json`);
    await requestLine(info, later.headers.get('x-request-id')!);
    for (const id of ids.slice(0, 3)) expect(logLines(info).filter((line) => line.reqId === id)).toEqual([]);
  });
});
