import type { Deps } from '../deps.js';
import { purgeExpired, type PurgeRound } from '../modules/housekeeping/purge-expired.js';

/**
 * How often the worker purges what has expired (docs/operations.md, "Housekeeping"): expired
 * rows cost only space meanwhile, since every read already ignores them.
 */
export const HOUSEKEEPING_EVERY_MS = 10 * 60_000;

interface HousekeepingLog {
  info(details: { purged: Record<string, number>; batches: number }, message: string): void;
  warn(details: { err: unknown }, message: string): void;
}

/**
 * Runs a purge round at start and then every HOUSEKEEPING_EVERY_MS, in the worker process; on
 * PostgreSQL with several workers, the round's lock lets one of them at a time do it. A failed
 * round is logged and tried again at the next.
 */
export class Housekeeper {
  private timer: NodeJS.Timeout | null = null;
  private current: Promise<unknown> | null = null;
  private stopped = false;

  constructor(private readonly deps: Deps, private readonly log: HousekeepingLog) {}

  start(): void {
    this.stopped = false;
    this.schedule(0);
  }

  /** No new round; waits for the one in flight (its batches are short). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.current;
  }

  /** One round now; tests drive it with a clock. */
  async runOnce(): Promise<PurgeRound> {
    return purgeExpired(this.deps);
  }

  private schedule(delayMs: number): void {
    this.timer = setTimeout(() => {
      this.current = this.runOnce()
        .then((round) => {
          if (Object.values(round.purged).some((count) => count > 0)) this.log.info({ purged: round.purged, batches: round.batches }, 'purged expired rows');
        })
        .catch((error: unknown) => this.log.warn({ err: error }, 'housekeeping failed; trying again at the next round'))
        .finally(() => {
          if (!this.stopped) this.schedule(HOUSEKEEPING_EVERY_MS);
        });
    }, delayMs);
    // A timer alone keeps no process alive.
    this.timer.unref();
  }
}
