import fs from 'node:fs';
import { createServer, type Server as HttpServer } from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, inject, it } from 'vitest';
import { ENGINES } from './support/harness.js';
import { call, createDatabase, listAll, signInOwner, startServer, stopServer, type ServerProcess } from './support/server-process.js';

/**
 * docs/webhooks.md, "Delivery guarantees": an event exists exactly when its change committed, and
 * is delivered at least once even when the process dies mid-attempt. The real service runs as a
 * child process (`node bin/plainbase.js serve`); a storm of imported records is being delivered
 * to a slow receiver when the server is killed with SIGKILL; a new server on the same data must
 * deliver every event, the interrupted ones again (after their claim runs out: 15 s here,
 * PLAINBASE_WEBHOOK_CLAIM_SECONDS, the least it may be) with the same x-baas-delivery, and leave
 * nothing pending. Both engines run at once: most of the time is the wait for the claim.
 */
const postgresUrl = inject('postgresUrl');
const RECORDS = 300;
/** The server dies when the receiver takes this call: that call, and others, are in flight. */
const KILL_AT_CALL = 60;
/** The worker's cap of calls in flight to one webhook (src/worker/delivery-worker.ts). */
const PER_WEBHOOK = 16;

interface Call {
  delivery: string;
  eventId: string;
  recordId: string;
}

/**
 * A webhook receiver on loopback that answers 200 after 20-50 ms, so that calls are in flight
 * when the server dies. It records every call and the most calls it ever had in flight at once.
 */
class SlowReceiver {
  readonly calls: Call[] = [];
  /** Events of the calls taken and not yet answered. */
  readonly unanswered = new Set<string>();
  inFlight = 0;
  maxInFlight = 0;
  private readonly server: HttpServer;
  private readonly watchers = new Set<() => void>();

  constructor(private readonly onCall: (count: number) => void = () => undefined) {
    this.server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      this.inFlight++;
      this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
      // Answered or cut off by the kill, the call is no longer in flight.
      response.once('close', () => this.inFlight--);
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const message = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        this.calls.push({ delivery: String(request.headers['x-baas-delivery']), eventId: message.id, recordId: message.data.record.id });
        this.unanswered.add(message.id);
        this.onCall(this.calls.length);
        for (const watcher of this.watchers) watcher();
        // The answer is slow on purpose: the receiver's own pace, not a wait in the test.
        setTimeout(() => {
          this.unanswered.delete(message.id);
          response.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
        }, 20 + Math.random() * 30);
      });
    });
    // Calls cut off by the killed server end in socket errors here; they are expected.
    this.server.on('clientError', (_error, socket) => socket.destroy());
  }

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://localhost:${(this.server.address() as net.AddressInfo).port}/hooks`;
  }

  /** Resolves once `done()` holds, checked now and after every call; fails after `timeoutMs`. */
  until(done: () => boolean, timeoutMs: number, what: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const check = () => {
        if (!done()) return;
        finish();
        resolve();
      };
      const timer = setTimeout(() => {
        finish();
        reject(new Error(`${what}: not within ${timeoutMs / 1000} s (${this.calls.length} calls so far)`));
      }, timeoutMs);
      const finish = () => {
        clearTimeout(timer);
        this.watchers.delete(check);
      };
      this.watchers.add(check);
      check();
    });
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

describe.concurrent('webhook delivery through a kill -9 of the server', () => {
  for (const engine of ENGINES) {
    it.skipIf(engine === 'postgres' && postgresUrl === null)(
      `[${engine}] every event reaches the receiver, interrupted ones again with the same x-baas-delivery, and nothing stays pending`,
      async () => {
        const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `plainbase-crash-${engine}-`));
        const database = engine === 'postgres' ? await createDatabase(postgresUrl!, 'plainbase_crash') : undefined;
        const env = {
          PLAINBASE_DATA_DIR: dataDir,
          PLAINBASE_DATABASE_URL: database?.url ?? '',
          PLAINBASE_ENV: 'development',
          PLAINBASE_WEBHOOK_ALLOW_PRIVATE: '1',
          PLAINBASE_WEBHOOK_CLAIM_SECONDS: '15',
        };
        let first: ServerProcess | undefined;
        let second: ServerProcess | undefined;
        let cutOff = new Set<string>();
        const receiver = new SlowReceiver((count) => {
          if (count !== KILL_AT_CALL) return;
          first!.child.kill('SIGKILL');
          cutOff = new Set(receiver.unanswered);
        });
        try {
          const hookUrl = await receiver.start();
          first = await startServer(env);
          let session = await signInOwner(first.base);
          expect((await call(first.base, 'POST', '/v1/collections', session, { name: 'storm' })).status).toBe(201);
          const webhook = await call(first.base, 'POST', '/v1/webhooks', session, { url: hookUrl, events: ['record.created'] });
          expect(webhook.status).toBe(201);

          const ndjson = Array.from({ length: RECORDS }, (_, i) => JSON.stringify({ i })).join('\n');
          const imported = await fetch(`${first.base}/v1/collections/storm/import`, {
            method: 'POST',
            headers: { ...session, 'content-type': 'application/x-ndjson' },
            body: ndjson,
          });
          expect(imported.status).toBe(200);
          expect((await imported.json()).imported).toBe(RECORDS);

          // The receiver kills the server as it takes call KILL_AT_CALL, with that call (at least) unanswered.
          await first.exited;
          expect(first.child.signalCode).toBe('SIGKILL');
          expect(cutOff.size).toBeGreaterThan(0);
          const callsBeforeKill = receiver.calls.length;
          expect(new Set(receiver.calls.map((c) => c.recordId)).size).toBeLessThan(RECORDS);

          second = await startServer(env);
          session = await signInOwner(second.base);
          const records = await listAll(second.base, '/v1/collections/storm/records', session);
          expect(records).toHaveLength(RECORDS);
          const recordIds = records.map((record) => record.id as string);

          // The others go at once; the calls cut off by the kill come again once their claim runs out.
          await receiver.until(
            () => {
              const arrived = new Set(receiver.calls.map((c) => c.recordId));
              const again = new Set(receiver.calls.slice(callsBeforeKill).map((c) => c.eventId));
              return recordIds.every((id) => arrived.has(id)) && [...cutOff].every((eventId) => again.has(eventId));
            },
            100_000,
            'every record event at the receiver, and the calls cut off by the kill again',
          );

          // Every call carries its event's id as x-baas-delivery, one event per record, so the
          // duplicates of a record all carry the same x-baas-delivery.
          for (const c of receiver.calls) expect(c.delivery).toBe(c.eventId);
          const eventsOf = new Map<string, Set<string>>();
          for (const c of receiver.calls) eventsOf.set(c.recordId, (eventsOf.get(c.recordId) ?? new Set()).add(c.delivery));
          expect([...eventsOf.values()].filter((events) => events.size !== 1)).toEqual([]);
          expect(eventsOf.size).toBe(RECORDS);
          // One webhook never has more than its cap of calls in flight.
          expect(receiver.maxInFlight).toBeLessThanOrEqual(PER_WEBHOOK);

          // The receiver has a call before the server logs it: wait for the log to catch up.
          const deadline = Date.now() + 30_000;
          let pending = await listAll(second.base, `/v1/webhooks/${webhook.body.id}/deliveries?state=pending`, session);
          while (pending.length > 0 && Date.now() < deadline) {
            await sleep(200); // polling another process's database state, with a deadline
            pending = await listAll(second.base, `/v1/webhooks/${webhook.body.id}/deliveries?state=pending`, session);
          }
          expect(pending).toEqual([]);
          // One delivery per event, however many attempts: the restart fanned nothing out twice.
          const deliveries = await listAll(second.base, `/v1/webhooks/${webhook.body.id}/deliveries`, session);
          expect(deliveries).toHaveLength(RECORDS);
          expect(deliveries.filter((delivery) => delivery.state !== 'succeeded')).toEqual([]);
          expect(new Set(deliveries.map((delivery) => delivery.eventId))).toEqual(new Set(receiver.calls.map((c) => c.eventId)));
        } finally {
          if (first && first.child.exitCode === null && first.child.signalCode === null) {
            first.child.kill('SIGKILL');
            await first.exited;
          }
          await stopServer(second);
          await receiver.stop();
          await database?.drop();
          fs.rmSync(dataDir, { recursive: true, force: true });
        }
      },
      200_000,
    );
  }
});
