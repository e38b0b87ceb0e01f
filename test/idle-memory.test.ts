import { setTimeout as sleep } from 'node:timers/promises';
import v8 from 'node:v8';
import { afterEach, describe, expect, it } from 'vitest';
import { trimMemoryWhenIdle, type IdleTrim } from '../src/idle-memory.js';

/**
 * The idle trim on this test process's own V8 heap (no database, no tenant: it is about one
 * process's memory). It checks every second here (the service: every 10 s): its last-resort
 * collection shrinks the young generation whatever V8 judges of the allocation rate, and hands
 * the pages back to the system, which an ordinary collection does not (they stay in V8's pool, in
 * the process's resident memory). The figures on the real service are in docs/performance.md
 * (`npm run bench:startup`).
 */

const CHECK_MS = 1000;
const MB = 1024 * 1024;

const youngGenerationBytes = () => v8.getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')!.space_size;
const residentBytes = () => process.memoryUsage.rss();

/** A busy spell: the event loop blocked for `ms`, allocating objects of which many survive a while, as requests in flight do. */
function blockFor(ms: number): void {
  const until = performance.now() + ms;
  const window: object[] = new Array(20_000);
  for (let i = 0; performance.now() < until; i++) window[i % window.length] = { i, text: `record ${i}`, list: [i, i + 1] };
}

let trim: IdleTrim | null = null;
afterEach(() => trim?.stop());

describe('trimMemoryWhenIdle', () => {
  it('after a busy spell, gives the young generation back to the system within two quiet checks, then leaves the heap alone until busy again', { timeout: 60_000 }, async () => {
    blockFor(300);
    expect(youngGenerationBytes()).toBeGreaterThanOrEqual(16 * MB);
    const residentWhenBusy = residentBytes();

    trim = trimMemoryWhenIdle({ intervalMs: CHECK_MS });
    // Start counts as the first busy spell.
    await sleep(CHECK_MS * 2 + 500);
    expect(youngGenerationBytes()).toBeLessThanOrEqual(8 * MB);
    // Given back to the system, not only to V8: an ordinary collection leaves the resident memory as it was.
    expect(residentWhenBusy - residentBytes()).toBeGreaterThanOrEqual(16 * MB);
    const first = trim.collections;
    expect([1, 2]).toContain(first);
    // Quiet and already trimmed: nothing more.
    await sleep(CHECK_MS * 2);
    expect(trim.collections).toBe(first);

    // Busy for two fifths of a check: however it falls across two checks, one of them sees at
    // least a fifth, twice the share that still counts as quiet. Then quiet: given back again.
    blockFor((CHECK_MS * 2) / 5);
    expect(youngGenerationBytes()).toBeGreaterThanOrEqual(16 * MB);
    await sleep(CHECK_MS * 3 + 500);
    expect(youngGenerationBytes()).toBeLessThanOrEqual(8 * MB);
    expect([1, 2]).toContain(trim.collections - first);
  });

  it('asks for nothing once stopped', async () => {
    blockFor(300);
    trim = trimMemoryWhenIdle({ intervalMs: 200 });
    trim.stop();
    await sleep(1000);
    expect(trim.collections).toBe(0);
    expect(youngGenerationBytes()).toBeGreaterThanOrEqual(16 * MB);
  });
});
