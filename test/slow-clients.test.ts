import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeSender } from '../src/delivery/guard-options.js';
import { DeliveryWorker } from '../src/worker/delivery-worker.js';
import { signedInOwner, type Client } from './support/client.js';
import { startTestApp, type TestApp } from './support/harness.js';
import { EventStreamReader } from './support/sse.js';

/**
 * Clients that send slowly, over raw sockets to a listening app with short bounds: the head
 * must arrive within 400 ms, and each 300 ms window of a body must bring 300 bytes (1000 B/s)
 * unless the body ends in it. A trickler is cut off near the bound; a normal request, an import
 * that takes several windows and an event stream that stays open for many are not. The bounds
 * live in the HTTP server, before any database work, so one engine (SQLite) tests them.
 */
const HEADERS_MS = 400;
const WINDOW_MS = 300;
/** What "within the bound" allows on top of it: a busy machine's timers run late. */
const SLACK_MS = 1500;

interface Ending {
  data: string;
  afterMs: number;
}

/** Opens a socket and writes `first`, then `drip` every `everyMs` until the server closes it. */
function trickle(port: number, first: string, drip: string, everyMs: number): Promise<Ending> {
  return new Promise((resolve) => {
    const started = Date.now();
    const socket: Socket = connect(port, '127.0.0.1');
    let data = '';
    let timer: NodeJS.Timeout | undefined;
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (data += chunk));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearInterval(timer);
      resolve({ data, afterMs: Date.now() - started });
    });
    socket.on('connect', () => {
      if (first) socket.write(first);
      if (drip) timer = setInterval(() => socket.writable && socket.write(drip), everyMs);
    });
  });
}

describe('slow clients are cut off; imports and event streams are not', () => {
  let t: TestApp;
  let owner: Client;
  let port: number;
  let worker: DeliveryWorker;
  let session: string;

  beforeAll(async () => {
    t = await startTestApp('sqlite', { headersTimeoutMs: HEADERS_MS, bodyTimeoutMs: WINDOW_MS, bodyMinBytesPerSecond: 1000 });
    owner = await signedInOwner(t);
    await owner.post('/v1/collections', { name: 'leads' });
    worker = new DeliveryWorker(t.deps, { idleMs: 200 });
    worker.start();
    const base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    port = Number(new URL(base).port);
    session = `plainbase_session=${owner.cookie}`;
  });
  afterAll(async () => {
    await worker?.stop();
    if (t) await closeSender(t.deps);
    await t?.close();
  });

  const signedInHead = (method: string, path: string, headers: string[]) =>
    [`${method} ${path} HTTP/1.1`, 'host: 127.0.0.1', `cookie: ${session}`, `x-baas-workspace: ${owner.workspaceId}`, ...headers].join('\r\n') + '\r\n\r\n';

  it('cuts off a head sent a header at a time, and a connection that sends nothing', async () => {
    const [trickled, silent] = await Promise.all([
      trickle(port, 'GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\n', 'x-padding: a\r\n', 100),
      trickle(port, '', '', 0),
    ]);
    for (const ending of [trickled, silent]) {
      expect(ending.data).toMatch(/^HTTP\/1\.1 408 /);
      expect(ending.afterMs).toBeGreaterThanOrEqual(HEADERS_MS - 50);
      expect(ending.afterMs).toBeLessThan(HEADERS_MS + SLACK_MS);
    }
  });

  it('cuts off a body sent a byte at a time: signed in (408 in the error shape) or anonymous (after its 401)', async () => {
    const [signedIn, anonymous] = await Promise.all([
      trickle(port, signedInHead('POST', '/v1/collections/leads/records', ['content-type: application/json', 'content-length: 100000']), '{', 50),
      trickle(port, 'POST /v1/collections HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: 100000\r\n\r\n', ' ', 50),
    ]);
    expect(signedIn.data).toMatch(/^HTTP\/1\.1 408 /);
    const body = JSON.parse(signedIn.data.slice(signedIn.data.indexOf('\r\n\r\n') + 4));
    expect(body.error).toMatchObject({ code: 'INVALID_REQUEST', requestId: expect.stringMatching(/^req_/), details: { minBytesPerSecond: 1000, windowSeconds: 0.3 } });
    expect(signedIn.data).toContain(`x-request-id: ${body.error.requestId}`);
    // Refused at once for its missing credential; then its connection goes too, not held open by the drip.
    expect(anonymous.data).toMatch(/^HTTP\/1\.1 401 /);
    for (const ending of [signedIn, anonymous]) {
      expect(ending.afterMs).toBeGreaterThanOrEqual(WINDOW_MS - 50);
      expect(ending.afterMs).toBeLessThan(2 * WINDOW_MS + SLACK_MS);
    }
    expect((await owner.get('/v1/collections/leads/records')).body.data).toEqual([]);
  });

  it('serves a normal request, and an import whose body takes many windows at a fair rate', async () => {
    expect((await owner.post('/v1/collections/leads/records', { data: { n: 0 } })).status).toBe(201);
    const lines = Array.from({ length: 40 }, (_, i) => `${JSON.stringify({ n: i + 1, note: 'x'.repeat(90) })}\n`);
    const bytes = lines.reduce((sum, line) => sum + Buffer.byteLength(line), 0);
    const ending = await new Promise<Ending>((resolve) => {
      const started = Date.now();
      const socket = connect(port, '127.0.0.1');
      let data = '';
      socket.setEncoding('utf8');
      socket.on('data', (chunk: string) => {
        data += chunk;
        if (/\r\n\r\n[\s\S]*\}$/.test(data)) socket.end();
      });
      socket.on('close', () => resolve({ data, afterMs: Date.now() - started }));
      socket.write(signedInHead('POST', '/v1/collections/leads/import', ['content-type: application/x-ndjson', `content-length: ${bytes}`]));
      // Four lines (~400 bytes) every 100 ms: about 4 kB/s, over ~1 s, several windows.
      let next = 0;
      const timer = setInterval(() => {
        socket.write(lines.slice(next, next + 4).join(''));
        next += 4;
        if (next >= lines.length) clearInterval(timer);
      }, 100);
    });
    expect(ending.afterMs).toBeGreaterThan(3 * WINDOW_MS);
    expect(ending.data, ending.data).toMatch(/^HTTP\/1\.1 20[01] /);
    expect((await owner.get('/v1/collections/leads/records?limit=100')).body.data).toHaveLength(41);
  });

  it('leaves an event stream open across many windows and head bounds', async () => {
    const reader = await EventStreamReader.open(`http://127.0.0.1:${port}/v1/events/stream?types=record.created`, { cookie: session, 'x-baas-workspace': owner.workspaceId! });
    try {
      expect(reader.status).toBe(200);
      // Longer than the head bound and several body windows, with nothing sent either way.
      await new Promise((resolve) => setTimeout(resolve, HEADERS_MS + 3 * WINDOW_MS));
      expect(reader.ended).toBe(false);
      await owner.post('/v1/collections/leads/records', { data: { n: 'late' } });
      await reader.until((r) => r.events.some((event) => JSON.parse(event.data).data.record.data.n === 'late'), 5000, 'the event after the wait');
      expect(reader.ended).toBe(false);
    } finally {
      reader.close();
    }
  });
});
