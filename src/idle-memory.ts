import { performance } from 'node:perf_hooks';
import v8 from 'node:v8';
import vm from 'node:vm';

/**
 * Gives memory back to the system once the process falls quiet.
 *
 * V8 grows its young generation to 32 MB during any burst of allocation (start-up is one, a busy
 * spell of requests or an import another) and shrinks it only in a collection that runs while
 * little has been allocated for the last few seconds. A quiet server runs no collection at all, so
 * it would keep those 32 MB, about a quarter of its idle memory, for as long as it stays quiet. So
 * after a busy spell, at each quiet check while the young generation is still large, this asks for
 * a full collection: by the second quiet check at the latest, V8 judges the allocation rate over
 * quiet time only and shrinks the young generation (freeing what the busy spell left in the old
 * one too). Then nothing more happens until the process has been busy again. A collection of an
 * idle heap takes some tens of milliseconds, at a moment when the event loop had next to nothing
 * to do.
 */

/** The share of a check's time the event loop may have been busy for the process to count as quiet. */
const QUIET_SHARE = 0.1;
/** A young generation this small has nothing worth giving back (V8 starts it at 1 MB per half). */
const SMALL_YOUNG_GENERATION = 8 * 1024 * 1024;
/** Collections asked for per quiet spell at most, should V8 keep the young generation large. */
const COLLECTIONS_PER_QUIET_SPELL = 3;

const youngGenerationBytes = () => v8.getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')?.space_size ?? 0;

export interface IdleTrim {
  stop(): void;
  /** How many collections it asked for so far. */
  readonly collections: number;
}

/** Starts the checks, every `intervalMs` (10 s: V8 looks at the allocation rate of the last 5 s). */
export function trimMemoryWhenIdle(options: { intervalMs?: number } = {}): IdleTrim {
  const collect = fullCollection();
  let timer: NodeJS.Timeout | undefined;
  const trim = { stop: () => clearInterval(timer), collections: 0 };
  if (!collect) return trim;
  let last = performance.eventLoopUtilization();
  // Start-up was the first busy spell.
  let collectionsLeft = COLLECTIONS_PER_QUIET_SPELL;
  timer = setInterval(() => {
    const now = performance.eventLoopUtilization();
    const busyShare = performance.eventLoopUtilization(now, last).utilization;
    last = now;
    if (busyShare > QUIET_SHARE) {
      collectionsLeft = COLLECTIONS_PER_QUIET_SPELL;
    } else if (collectionsLeft > 0 && youngGenerationBytes() > SMALL_YOUNG_GENERATION) {
      collectionsLeft -= 1;
      trim.collections += 1;
      collect();
      // The collection's own time is not activity.
      last = performance.eventLoopUtilization();
    }
  }, options.intervalMs ?? 10_000);
  timer.unref();
  return trim;
}

/**
 * V8's full collection, which Node offers only to a process started with --expose-gc. The flag
 * can be turned on while running; the function then appears in contexts made after that. Null
 * where this Node does not allow it: the process keeps its memory then, nothing else changes.
 */
function fullCollection(): (() => void) | null {
  if (typeof globalThis.gc === 'function') return globalThis.gc;
  try {
    v8.setFlagsFromString('--expose-gc');
    const collect: unknown = vm.runInNewContext('gc');
    // Off again, so that no context made later (by a library's vm use) finds a global gc.
    v8.setFlagsFromString('--no-expose-gc');
    return typeof collect === 'function' ? (collect as () => void) : null;
  } catch {
    return null;
  }
}
