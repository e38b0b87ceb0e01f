import net from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/harness.js';

/**
 * Two Host headers: Node keeps the first, a proxy in front may have routed by the other. Sent
 * over a raw socket, as no HTTP client would send them.
 */
let t: TestApp;
let port: number;

beforeAll(async () => {
  t = await startTestApp('sqlite');
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  port = (t.app.server.address() as net.AddressInfo).port;
});
afterAll(async () => {
  await t.close();
});

/** Sends the request as written and resolves with the whole answer once the server closes. */
function rawRequest(head: string): Promise<{ status: number; headers: string; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const [headers = '', body = ''] = text.split('\r\n\r\n', 2);
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(headers)?.[1]), headers, body });
    });
    socket.write(`${head}connection: close\r\n\r\n`);
  });
}

it('a request with two Host headers is a 400 INVALID_REQUEST in the error shape, whatever their case and order', async () => {
  for (const hosts of ['Host: a.example\r\nHost: b.example\r\n', 'host: 127.0.0.1\r\nHOST: 127.0.0.1\r\n', 'Host: a.example\r\nX-Other: 1\r\nhost: \r\n']) {
    for (const path of ['/healthz', '/v1/me', '/v1/collections']) {
      const answer = await rawRequest(`GET ${path} HTTP/1.1\r\n${hosts}`);
      expect(answer.status, `${path} with ${JSON.stringify(hosts)}`).toBe(400);
      const { error } = JSON.parse(answer.body);
      expect(error).toMatchObject({ code: 'INVALID_REQUEST', details: { field: 'headers.host' } });
      expect(answer.headers).toContain(`x-request-id: ${error.requestId}`);
    }
  }
});

it('one Host header is served as before', async () => {
  const answer = await rawRequest('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n');
  expect(answer.status).toBe(200);
  expect(JSON.parse(answer.body)).toEqual({ status: 'ok' });
});
