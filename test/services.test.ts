import { afterEach, expect, it } from 'vitest';
import { senderFor } from '../src/delivery/guard-options.js';
import { openEventStreams } from '../src/http/routes/events/stream-events.js';
import { takeStreamSlot } from '../src/http/routes/events/stream-slots.js';
import { rememberCollection, rememberedCollection } from '../src/modules/collections/remembered-collections.js';
import { hubFor } from '../src/modules/events/event-hub.js';
import { fileStoreFor } from '../src/storage/store-for.js';
import { describeEachEngine, startTestApp, startTestAppBeside, type TestApp } from './support/harness.js';

/**
 * Who shares what (build-services.ts): an app and the worker beside it in one process share every
 * service, however their Deps were copied; an app beside it (another process, simulated) shares none.
 */
describeEachEngine('services', (engine) => {
  const started: TestApp[] = [];
  afterEach(async () => {
    for (const t of started.splice(0).reverse()) await t.close();
  });

  it('are the same for the app and its worker although serve hands the app a copy of the deps', async () => {
    const t = await startTestApp(engine);
    started.push(t);
    // What main.ts does: the app gets `{ ...deps, logger }`, the worker `deps` itself.
    const appDeps = { ...t.deps, logger: false as const };
    expect(hubFor(appDeps)).toBe(hubFor(t.deps));
    expect(senderFor(appDeps)).toBe(senderFor(t.deps));
    expect(fileStoreFor(appDeps)).toBe(fileStoreFor(t.deps));
    // A stream slot taken through the app's copy counts against the same process-wide cap.
    const release = takeStreamSlot(appDeps, { workspaceId: 'ws_a', caller: 'key_a' });
    expect(t.deps.services.streamSlots.total).toBe(1);
    release();
    expect(t.deps.services.streamSlots.total).toBe(0);
  });

  it('are separate for an app beside it, as for another process', async () => {
    const t = await startTestApp(engine);
    started.push(t);
    const beside = await startTestAppBeside(t);
    started.push(beside);
    for (const [name, service] of Object.entries(t.deps.services)) {
      expect(beside.deps.services[name as keyof typeof t.deps.services], name).not.toBe(service);
    }
    expect(hubFor(beside.deps)).not.toBe(hubFor(t.deps));
    // What one app remembers, the other does not (remembered only where statements are round trips).
    const collection = { id: 'col_1', workspace_id: 'ws_a', name: 'leads' } as never;
    const remembers = t.deps.dialect.statementsRoundTrip;
    rememberCollection(t.deps, 'ws_a', 'leads', collection);
    expect(rememberedCollection(t.deps, 'ws_a', 'leads')).toBe(remembers ? collection : undefined);
    expect(rememberedCollection(beside.deps, 'ws_a', 'leads')).toBeUndefined();
    const release = takeStreamSlot(t.deps, { workspaceId: 'ws_a', caller: 'key_a' });
    expect(openEventStreams(beside.deps)).toBe(0);
    expect(beside.deps.services.streamSlots.total).toBe(0);
    release();
  });
});
