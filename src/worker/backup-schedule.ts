import { Cron } from 'croner';
import type { Deps } from '../deps.js';
import { takeScheduledBackup } from '../modules/backups/backup-runs.js';
import type { BackupSummary } from '../modules/backups/write-backup.js';

/** A timer never waits longer than this before looking at the clock again (setTimeout's limit is about 24 days). */
const LONGEST_WAIT_MS = 60 * 60_000;

interface BackupLog {
  info(details: Record<string, unknown>, message: string): void;
  warn(details: { err: unknown; name?: string }, message: string): void;
}

/**
 * Takes a backup at each tick of PLAINBASE_BACKUP_SCHEDULE (a cron pattern read in UTC), in every
 * process that runs the worker; for each tick exactly one of them takes it, through the claim of
 * modules/backups/backup-runs.ts. A failed backup is logged and the next tick tries again.
 */
export class BackupSchedule {
  private readonly cron: Cron;
  private timer: NodeJS.Timeout | null = null;
  private current: Promise<unknown> | null = null;
  private stopped = false;

  constructor(private readonly deps: Deps, pattern: string, private readonly log: BackupLog) {
    this.cron = new Cron(pattern, { timezone: 'UTC', mode: '5-part' });
  }

  /** The first tick after `after` (the clock's now by default); null if the schedule has no more. */
  nextTick(after: Date = this.deps.clock.now()): Date | null {
    return this.cron.nextRun(after);
  }

  /** Takes the backup of `tick` if this process's claim lands; null when another process took it. */
  async runTick(tick: Date): Promise<BackupSummary | null> {
    return takeScheduledBackup(this.deps, tick);
  }

  start(): void {
    this.stopped = false;
    this.waitFor(this.nextTick());
  }

  /** No new tick; waits for a backup in flight. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.current;
  }

  private waitFor(tick: Date | null): void {
    if (this.stopped || tick === null) return;
    const wait = Math.min(Math.max(0, tick.getTime() - this.deps.clock.now().getTime()), LONGEST_WAIT_MS);
    this.timer = setTimeout(() => {
      if (this.deps.clock.now() < tick) return this.waitFor(tick);
      this.current = this.runTick(tick)
        .then((summary) => {
          if (summary) this.log.info({ backup: summary.file, bytes: summary.bytes }, 'took the scheduled backup');
        })
        .catch((error: unknown) => this.log.warn({ err: error }, 'the scheduled backup failed; the next tick tries again'))
        .finally(() => this.waitFor(this.nextTick(new Date(Math.max(tick.getTime(), this.deps.clock.now().getTime())))));
    }, wait);
    this.timer.unref();
  }
}
