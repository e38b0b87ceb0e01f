import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { closeSender, senderFor } from '../src/delivery/guard-options.js';
import { RESPONSE_BODY_LIMIT } from '../src/delivery/send.js';
import { loggedBody } from '../src/delivery/logged-response.js';
import { fanOutEvents, recordAttempts, RESPONSE_NOT_LOGGED, type DueDelivery } from '../src/modules/webhooks/delivery-queue.js';
import { unstorableTextReason } from '../src/storable-text.js';
import { DeliveryWorker } from '../src/worker/delivery-worker.js';
import { signedInOwner, type Client } from './support/client.js';
import { describeEachEngine, startTestApp, type TestApp } from './support/harness.js';

/** A 1×1 GIF: NUL bytes and bytes that are not UTF-8, as any image has. */
const GIF = Buffer.from('R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw==', 'base64');
const GZIPPED = gzipSync(JSON.stringify({ received: true, padding: 'x'.repeat(200) }));

type Answer = (request: IncomingMessage, response: ServerResponse) => void;

/**
 * Receivers that answer what no well-behaved one would: compressed, binary, NUL bytes, bytes that
 * are not UTF-8, an endless body, a body broken off. Whatever they send, the attempt must be
 * logged promptly and the delivery end as its status says, never sent again and again.
 */
describeEachEngine('what a receiver answers', (engine) => {
  let t: TestApp;
  let owner: Client;
  let worker: DeliveryWorker;
  let server: Server;
  let base: string;
  const warnings: string[] = [];
  const calls = new Map<string, number>();
  const answers = new Map<string, Answer>();
  let collections = 0;

  beforeAll(async () => {
    t = await startTestApp(engine, { env: 'development', webhookAllowPrivate: true });
    owner = await signedInOwner(t);
    worker = new DeliveryWorker(t.deps, { log: { warn: (_details, message) => warnings.push(message) } });
    server = createServer((request, response) => {
      const path = request.url!;
      calls.set(path, (calls.get(path) ?? 0) + 1);
      response.on('error', () => undefined);
      // The request body is read first, as receivers do, so every answer comes after it.
      request.resume().on('end', () => answers.get(path)!(request, response));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await closeSender(t.deps);
    await t.close();
  });

  /** A webhook of its own (on a collection of its own) answered by `answer`; one record sent to it. */
  async function deliverOnce(path: string, answer: Answer) {
    answers.set(path, answer);
    const collection = `answers_${(collections += 1)}`;
    await owner.post('/v1/collections', { name: collection });
    const { body: webhook } = await owner.post('/v1/webhooks', { url: `${base}${path}`, events: ['record.created'], collections: [collection] });
    await owner.post(`/v1/collections/${collection}/records`, { data: { n: 1 } });
    const started = performance.now();
    await worker.drain();
    const wallMs = performance.now() - started;
    const { body: { data: [listed] } } = await owner.get(`/v1/webhooks/${webhook.id}/deliveries`);
    const { body: detail } = await owner.get(`/v1/webhooks/${webhook.id}/deliveries/${listed.id}`);
    return { detail, wallMs };
  }

  const answering = (status: number, headers: Record<string, string>, body: Buffer | string): Answer => (_request, response) => {
    response.writeHead(status, headers).end(body);
  };

  it('a gzip body is logged as it arrived, summarised, never decompressed, and the delivery succeeds', async () => {
    let asked: string | undefined;
    const { detail } = await deliverOnce('/gzip', (request, response) => {
      asked = request.headers['accept-encoding'];
      answering(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' }, GZIPPED)(request, response);
    });
    expect(asked).toBe('identity');
    expect(detail).toMatchObject({ state: 'succeeded', attemptCount: 1 });
    expect(detail.attempts).toHaveLength(1);
    expect(detail.attempts[0]).toMatchObject({
      status: 200,
      error: null,
      responseBody: `[binary body: ${GZIPPED.length} bytes, application/json, content-encoding gzip]`,
      responseHeaders: { 'content-encoding': 'gzip', 'content-type': 'application/json' },
    });
  });

  it('an image is summarised by its size and type; a failing status still fails and is retried', async () => {
    const { detail } = await deliverOnce('/gif', answering(200, { 'content-type': 'image/gif' }, GIF));
    expect(detail).toMatchObject({ state: 'succeeded', attemptCount: 1 });
    expect(detail.attempts[0]).toMatchObject({ status: 200, responseBody: `[binary body: ${GIF.length} bytes, image/gif]` });

    // The same bytes without a content type are still not text.
    const failing = await deliverOnce('/gif-failing', answering(503, {}, GIF));
    expect(failing.detail).toMatchObject({ state: 'pending', attemptCount: 1 });
    expect(failing.detail.attempts[0]).toMatchObject({ status: 503, error: 'HTTP 503', responseBody: `[binary body: ${GIF.length} bytes]` });
  });

  it('text with NUL bytes or bytes that are not UTF-8 is kept, those bytes replaced', async () => {
    const nul = await deliverOnce('/nul', answering(200, { 'content-type': 'text/plain' }, Buffer.from('accepted\u0000 id=7\u0000', 'utf8')));
    expect(nul.detail).toMatchObject({ state: 'succeeded' });
    expect(nul.detail.attempts[0].responseBody).toBe('accepted\uFFFD id=7\uFFFD');

    const latin1 = await deliverOnce('/latin1', answering(200, { 'content-type': 'text/plain; charset=latin1' }, Buffer.from('reçu, café', 'latin1')));
    expect(latin1.detail).toMatchObject({ state: 'succeeded' });
    expect(latin1.detail.attempts[0].responseBody).toBe('re\uFFFDu, caf\uFFFD');
  });

  it('an endless 2xx body: the first 16 KiB are logged at once, the connection is closed, the delivery succeeds', async () => {
    let written = 0;
    let socketClosed = false;
    const chunk = Buffer.alloc(64 * 1024, 'y');
    const { detail, wallMs } = await deliverOnce('/endless', (request, response) => {
      request.socket.once('close', () => (socketClosed = true));
      response.writeHead(200, { 'content-type': 'text/plain' });
      const pump = () => {
        while (!response.destroyed) {
          written += chunk.length;
          if (!response.write(chunk)) return void response.once('drain', pump);
        }
      };
      pump();
    });
    expect(wallMs).toBeLessThan(2000);
    expect(detail).toMatchObject({ state: 'succeeded', attemptCount: 1 });
    expect(detail.attempts[0]).toMatchObject({ status: 200, error: null, responseBody: 'y'.repeat(RESPONSE_BODY_LIMIT) });
    expect(detail.attempts[0].durationMs).toBeLessThan(2000);
    await expect.poll(() => socketClosed, { timeout: 2000, interval: 10 }).toBe(true);
    // Only what the socket buffers held before the close: nothing like the whole body.
    expect(written).toBeLessThan(16 * 1024 * 1024);
  });

  it('a 2xx whose body breaks off counts as the success it said, with what arrived', async () => {
    const { detail } = await deliverOnce('/broken-off', (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/plain' });
      response.write('got it, but', () => response.destroy());
    });
    expect(detail).toMatchObject({ state: 'succeeded', attemptCount: 1 });
    expect(detail.attempts[0]).toMatchObject({ status: 200, responseBody: 'got it, but' });
  });

  it('an answer the database refuses is logged without its body, and the delivery still moves on', async () => {
    // A rule in the table stands for any reason a log row might be refused.
    if (engine === 'sqlite') {
      await sql`create trigger refuse_poison before insert on delivery_attempts when new.response_body like '%poison%'
        begin select raise(abort, 'poisoned body'); end`.execute(t.deps.db);
    } else {
      await sql`create function refuse_poison() returns trigger language plpgsql as $$
        begin if new.response_body like '%poison%' then raise exception 'poisoned body'; end if; return new; end $$`.execute(t.deps.db);
      await sql`create trigger refuse_poison before insert on delivery_attempts for each row execute function refuse_poison()`.execute(t.deps.db);
    }
    const warned = warnings.length;
    const { detail } = await deliverOnce('/poison', answering(200, { 'content-type': 'text/plain', 'x-note': 'poison' }, 'poison'));
    expect(detail).toMatchObject({ state: 'succeeded', attemptCount: 1 });
    expect(detail.attempts).toHaveLength(1);
    expect(detail.attempts[0]).toMatchObject({ status: 200, error: null, responseBody: RESPONSE_NOT_LOGGED, responseHeaders: {} });
    expect(warnings.slice(warned)).toEqual([expect.stringContaining('logged without it')]);

    const failing = await deliverOnce('/poison-failing', answering(500, {}, 'poison'));
    expect(failing.detail).toMatchObject({ state: 'pending', attemptCount: 1 });
    expect(failing.detail.attempts[0]).toMatchObject({ status: 500, error: 'HTTP 500', responseBody: RESPONSE_NOT_LOGGED });
  });

  it('no delivery that succeeded is sent again, after its claim would have run out and every retry gap', async () => {
    const before = new Map(calls);
    expect(before.size).toBeGreaterThan(5);
    t.clock.advance(24 * 3600_000);
    await worker.drain();
    for (const [path, count] of before) {
      // The failing ones are retried as their status says; the rest are done.
      expect(calls.get(path), path).toBe(path.endsWith('-failing') ? count + 1 : count);
    }
  });

  it('property: whatever bytes a receiver answers, the attempt is logged and its body is storable text', async () => {
    const collection = 'property_answers';
    await owner.post('/v1/collections', { name: collection });
    const url = `${base}/property`;
    const { body: webhook } = await owner.post('/v1/webhooks', { url, events: ['record.created'], collections: [collection] });
    await owner.post(`/v1/collections/${collection}/records`, { data: { n: 1 } });
    await fanOutEvents(t.deps, 500);
    const row = await t.deps.db.selectFrom('deliveries').selectAll().where('webhook_id', '=', webhook.id).executeTakeFirstOrThrow();
    const delivery: DueDelivery = {
      id: row.id, workspaceId: row.workspace_id, webhookId: row.webhook_id, eventId: row.event_id, eventType: row.event_type,
      attemptCount: 0, url, secret: webhook.secret, message: '{}',
    };
    const bodies = fc.oneof(
      fc.uint8Array({ maxLength: 3000 }),
      // Mostly text, with the bytes that trouble storage: NUL, a lone continuation byte, 0xFF.
      fc.array(fc.constantFrom(0x00, 0x80, 0xff, 0x41, 0x20, 0x0a), { maxLength: 200 }).map((values) => Uint8Array.from(values)),
      fc.string({ unit: 'binary', maxLength: 500 }).map((text) => new Uint8Array(Buffer.from(text, 'utf8'))),
      fc.constant(new Uint8Array(RESPONSE_BODY_LIMIT + 3).fill(0xe2)),
    );
    const types = fc.constantFrom(undefined, 'text/plain', 'application/json', 'image/png', 'application/octet-stream', 'text/html; charset=utf-8');
    const encodings = fc.constantFrom(undefined, 'gzip', 'identity', 'br');
    await fc.assert(
      fc.asyncProperty(bodies, types, encodings, fc.constantFrom(200, 204, 500), async (bytes, type, encoding, status) => {
        answers.set('/property', (_request, response) => {
          const headers: Record<string, string> = {};
          if (type) headers['content-type'] = type;
          if (encoding) headers['content-encoding'] = encoding;
          response.writeHead(status, headers).end(status === 204 ? undefined : Buffer.from(bytes));
        });
        const result = await senderFor(t.deps).send({ url, secret: webhook.secret, webhookId: webhook.id, eventId: row.event_id, eventType: 'record.created', body: '{}', timestamp: 0 });
        expect(result.status).toBe(status);
        await t.deps.db.deleteFrom('delivery_attempts').where('delivery_id', '=', delivery.id).execute();
        await recordAttempts(t.deps, [{ delivery, result, attemptedAt: t.clock.now() }]);
        const logged = await t.deps.db.selectFrom('delivery_attempts').selectAll().where('delivery_id', '=', delivery.id).executeTakeFirstOrThrow();
        expect(logged.response_body).toBe(result.responseBody);
        expect(unstorableTextReason(logged.response_body)).toBeUndefined();
        expect(logged.response_body.length).toBeLessThanOrEqual(RESPONSE_BODY_LIMIT);
        expect(JSON.parse(logged.response_headers)).toEqual(result.responseHeaders);
      }),
      { numRuns: 30 },
    );
  });
});

it('property: text a receiver answers is logged exactly as it was sent', () => {
  // Printable text of any script; control characters other than tab and line breaks aside.
  const text = fc.string({ unit: 'binary', maxLength: 300 }).filter((value) => !/[\u0000-\u0008\u000B\u000E-\u001F\u007F\uFFFD]/.test(value));
  fc.assert(
    fc.property(text, fc.constantFrom(undefined, 'text/plain', 'application/json; charset=utf-8'), (value, contentType) => {
      expect(loggedBody(Buffer.from(value, 'utf8'), { cut: false, contentType, contentEncoding: undefined })).toBe(value);
    }),
  );
});
