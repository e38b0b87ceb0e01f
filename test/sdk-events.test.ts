import { afterEach, beforeEach, expect, it } from 'vitest';
import { DeliveryWorker } from '../src/worker/delivery-worker.js';
import { Plainbase, PlainbaseError, type PlainbaseEvent } from '../sdk/src/index.js';
import { describeEachEngine } from './support/harness.js';
import { startSdkWorld, type SdkWorld } from './support/sdk-world.js';

/** pb.events against a live server on loopback, with the worker running as in production. */
describeEachEngine('SDK: events', (engine) => {
  let w: SdkWorld;
  let worker: DeliveryWorker;
  beforeEach(async () => {
    w = await startSdkWorld(engine);
    expect((await w.main.owner.post('/v1/collections', { name: 'leads' })).status).toBe(201);
    worker = new DeliveryWorker(w.t.deps, { idleMs: 200 });
    worker.start();
  });
  afterEach(async () => {
    await worker.stop();
    await w?.close();
  });

  let fed = 0;
  const until = async (check: () => boolean, what: string, timeoutMs = 5000, refresh?: () => Promise<void>) => {
    const deadline = Date.now() + timeoutMs;
    for (await refresh?.(); !check(); await refresh?.()) {
      if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };

  it('lists the feed across pages, newest first or oldest first after an event', async () => {
    const pb = new Plainbase({ url: w.base, key: await w.main.key(['records:read', 'records:create']) });
    const leads = pb.collection('leads').records;
    for (let n = 1; n <= 7; n++) await leads.create({ n });
    // The running worker puts events in the feed; a drain beside its own rounds could return first.
    await until(() => fed === 7, 'all seven events in the feed', 10_000, async () => {
      fed = 0;
      for await (const event of pb.events.list({ types: ['record.created'], limit: 100 })) if (event) fed += 1;
    });
    const newest: PlainbaseEvent[] = [];
    for await (const event of pb.events.list({ types: ['record.created'], limit: 3 })) newest.push(event);
    expect(newest.map((event) => (event.data as any).record.data.n)).toEqual([7, 6, 5, 4, 3, 2, 1]);
    const after: number[] = [];
    for await (const event of pb.events.list({ types: ['record.created'], after: newest[4]!.id, limit: 2 })) after.push((event.data as any).record.data.n);
    expect(after).toEqual([4, 5, 6, 7]);
  });

  it('subscribes: events in order as they happen, resumed after a drop with none missed or repeated', async () => {
    const key = await w.main.key(['records:read', 'records:create']);
    const pb = new Plainbase({ url: w.base, key });
    const seen: number[] = [];
    const reconnects: string[] = [];
    const subscription = pb.events.subscribe({ types: ['record.created'], onReconnect: (reason) => reconnects.push(reason) }, (event) => {
      seen.push((event.data as any).record.data.n);
    });
    // Give the stream a moment to open before writing.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const leads = pb.collection('leads').records;
    for (let n = 1; n <= 3; n++) await leads.create({ n });
    await until(() => seen.length === 3, 'three events');

    // The server goes away and comes back on the same port: the subscription reconnects and resumes.
    const port = Number(new URL(w.base).port);
    await w.t.app.close();
    await until(() => reconnects.length > 0, 'a reconnect');
    const { buildApp } = await import('../src/app.js');
    const again = await buildApp(Object.assign(w.t.deps, { logger: false as const }));
    await again.listen({ port, host: '127.0.0.1' });
    try {
      for (let n = 4; n <= 6; n++) await leads.create({ n });
      await until(() => seen.length === 6, 'the events after the drop', 15_000);
      expect(seen).toEqual([1, 2, 3, 4, 5, 6]);
      expect(subscription.lastEventId).toMatch(/^evt_/);
      await subscription.close();
    } finally {
      await again.close();
    }
  });

  it('stops for good when the key is revoked, and says why', async () => {
    const created = await w.main.owner.post('/v1/keys', { name: 'short-lived', scopes: ['records:read'] });
    const pb = new Plainbase({ url: w.base, key: created.body.secret });
    let closedWith: PlainbaseError | null | undefined;
    const subscription = pb.events.subscribe({ onClose: (error) => (closedWith = error) }, () => undefined);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await w.main.owner.post(`/v1/keys/${created.body.id}/revoke`)).status).toBe(200);
    await subscription.closed;
    expect(closedWith).toBeInstanceOf(PlainbaseError);
    expect(closedWith!.code).toBe('INVALID_API_KEY');
    expect(closedWith!.status).toBe(401);
  });
});
