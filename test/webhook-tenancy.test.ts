import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { closeSender } from '../src/delivery/guard-options.js';
import { DeliveryWorker } from '../src/worker/delivery-worker.js';
import { Client, expectError, signedInOwner } from './support/client.js';
import { describeEachEngine, startTestApp, type TestApp } from './support/harness.js';

/**
 * Two workspaces side by side on one worker: what one tenant does to its webhooks (receivers that
 * hang, a flood of webhooks) must not reach the other. Receivers are addressed as `localhost`,
 * a host name, as real ones are.
 */

/** A receiver that answers every call at once, or never (it accepts and keeps the socket). */
class LoopbackReceiver {
  readonly bodies: string[] = [];
  /** Calls being held open now, and the most ever held at once, per path. */
  readonly open = new Map<string, number>();
  readonly mostOpen = new Map<string, number>();
  mostOpenInAll = 0;
  private readonly waiting = new Set<() => void>();
  private readonly server: Server;

  constructor(private readonly hang: boolean) {
    this.server = createServer((request, response) => this.handle(request, response));
  }

  private handle(request: IncomingMessage, response: ServerResponse): void {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      if (!this.hang) {
        this.bodies.push(body);
        for (const wake of this.waiting) wake();
        response.writeHead(204).end();
        return;
      }
      const path = request.url ?? '';
      this.open.set(path, (this.open.get(path) ?? 0) + 1);
      this.mostOpen.set(path, Math.max(this.mostOpen.get(path) ?? 0, this.open.get(path)!));
      this.mostOpenInAll = Math.max(this.mostOpenInAll, [...this.open.values()].reduce((a, b) => a + b, 0));
      response.on('close', () => this.open.set(path, this.open.get(path)! - 1));
    });
  }

  async start(): Promise<number> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return (this.server.address() as AddressInfo).port;
  }

  /** Resolves when `count` calls have arrived in all. */
  received(count: number, timeoutMs: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const check = () => {
        if (this.bodies.length < count) return;
        clearTimeout(timer);
        this.waiting.delete(check);
        resolve();
      };
      const timer = setTimeout(() => {
        this.waiting.delete(check);
        reject(new Error(`only ${this.bodies.length} of ${count} calls within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiting.add(check);
      check();
    });
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

describeEachEngine('webhooks shared fairly between workspaces', (engine) => {
  let t: TestApp;
  let a: Client;
  let b: Client;
  beforeEach(async () => {
    t = await startTestApp(engine, { env: 'development', webhookAllowPrivate: true, webhooksPerWorkspace: 6 });
    a = await signedInOwner(t);
    b = new Client(t);
    b.cookie = a.cookie;
    b.workspaceId = (await a.post('/v1/workspaces', { name: 'Neighbour' })).body.id;
    for (const client of [a, b]) expect((await client.post('/v1/collections', { name: 'leads' })).status).toBe(201);
  });
  afterEach(async () => {
    await closeSender(t.deps);
    await t.close();
  });

  it("a workspace whose receivers hang holds only its share: another workspace's events still arrive within a second", async () => {
    const hanging = new LoopbackReceiver(true);
    const fast = new LoopbackReceiver(false);
    const hangingPort = await hanging.start();
    const fastPort = await fast.start();
    const worker = new DeliveryWorker(t.deps, { idleMs: 200 });
    try {
      for (let i = 0; i < 4; i++) {
        expect((await a.post('/v1/webhooks', { url: `http://localhost:${hangingPort}/hang-${i}`, events: ['*'] })).status).toBe(201);
      }
      expect((await b.post('/v1/webhooks', { url: `http://localhost:${fastPort}/fast`, events: ['record.created'] })).status).toBe(201);
      // A backlog in A: 4 webhooks × 30 events, far more than the worker may hold open for A.
      for (let i = 0; i < 30; i++) await a.post('/v1/collections/leads/records', { data: { i } });
      worker.start();
      // Let A's calls pile up to its cap before B writes anything.
      const deadline = Date.now() + 5000;
      while (hanging.mostOpenInAll < 32 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(hanging.mostOpenInAll).toBe(32);

      const waits: number[] = [];
      for (let i = 1; i <= 5; i++) {
        const started = Date.now();
        await b.post('/v1/collections/leads/records', { data: { from: 'b', i } });
        await fast.received(i, 1000);
        waits.push(Date.now() - started);
      }
      expect(waits.every((ms) => ms < 1000), `B waited ${waits.join(', ')} ms`).toBe(true);
      expect(fast.bodies.map((body) => JSON.parse(body).data.record.data.i)).toEqual([1, 2, 3, 4, 5]);
      // A's receivers held at most the workspace's share (32), and each webhook at most 16.
      expect(hanging.mostOpenInAll).toBe(32);
      for (const most of hanging.mostOpen.values()) expect(most).toBeLessThanOrEqual(16);
    } finally {
      // Hung calls fail at once when their sockets close, so the worker stops without waiting 10 s.
      await hanging.stop();
      await worker.stop();
      await fast.stop();
    }
  });

  it('caps the webhooks of a workspace, counting concurrent creates exactly, and leaves other workspaces their own room', async () => {
    const url = 'https://hooks.example.com/x';
    t.deps.resolveHost = async () => ['93.184.216.34'];
    const answers = await Promise.all(Array.from({ length: 10 }, () => a.post('/v1/webhooks', { url, events: ['*'] })));
    expect(answers.filter((answer) => answer.status === 201)).toHaveLength(6);
    const refused = answers.filter((answer) => answer.status !== 201);
    expect(refused).toHaveLength(4);
    for (const answer of refused) {
      expectError(answer, 409, 'CONFLICT');
      expect(answer.body.error.details).toEqual({ limit: 6 });
      expect(answer.body.error.message).toMatch(/6 webhooks/);
    }
    expect((await a.get('/v1/webhooks')).body.data).toHaveLength(6);
    // The other workspace has all of its own room.
    for (let i = 0; i < 6; i++) expect((await b.post('/v1/webhooks', { url, events: ['*'] })).status).toBe(201);
    expectError(await b.post('/v1/webhooks', { url, events: ['*'] }), 409, 'CONFLICT');
    // Deleting one makes room again.
    const [first] = (await a.get('/v1/webhooks')).body.data;
    expect((await a.delete(`/v1/webhooks/${first.id}`)).status).toBe(204);
    expect((await a.post('/v1/webhooks', { url, events: ['*'] })).status).toBe(201);
  });
});
