import pg from 'pg';
import type { Deps } from '../deps.js';
import { onEventsWritten } from '../modules/events/outbox-signal.js';
import { claimDueDeliveries, fanOutEvents, purgeOldLogs, recordAttempt, type DueDelivery } from './deliveries-store.js';
import { senderFor } from './guard-options.js';

export interface WorkerOptions {
  /** Calls in flight at once, over all webhooks. */
  concurrency: number;
  /** Calls in flight at once to one webhook: a slow receiver holds at most this many slots. */
  perWebhook: number;
  /** Longest sleep when nothing wakes the worker: the safety net behind the wake-ups. */
  idleMs: number;
  /** How long a claimed delivery stays claimed; longer than an attempt can take (10 s). */
  leaseMs: number;
  /** Where trouble is told: the server's JSON log. */
  log: WarningLog;
}

interface WarningLog {
  warn(details: { err: unknown; deliveryId?: string }, message: string): void;
}

/** Without the server's log (tests, tools), trouble still shows on stderr. */
const STDERR_LOG: WarningLog = {
  warn: ({ err }, message) => process.emitWarning(`${message}: ${err instanceof Error ? err.message : String(err)}`),
};

const DEFAULTS: WorkerOptions = { concurrency: 64, perWebhook: 16, idleMs: 1000, leaseMs: 60_000, log: STDERR_LOG };
const PURGE_EVERY_MS = 3600_000;

/**
 * Delivers webhook events: fans new outbox events out into deliveries, claims the ones that are
 * due and attempts them concurrently, each webhook capped so one dead receiver cannot hold up the
 * others. It wakes as soon as events are written in this process, on PostgreSQL NOTIFY from
 * other processes, when a retry falls due, and at the latest every `idleMs`.
 */
export class DeliveryWorker {
  private readonly options: WorkerOptions;
  private readonly inFlight = new Map<string, number>();
  private readonly attempts = new Set<Promise<void>>();
  private running = false;
  private wakeUp: (() => void) | null = null;
  private stopListening: (() => void) | null = null;
  private loopDone: Promise<void> | null = null;
  private lastPurge = 0;

  constructor(private readonly deps: Deps, options: Partial<WorkerOptions> = {}) {
    this.options = { ...DEFAULTS, ...options };
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    const stopLocal = onEventsWritten(() => this.wake());
    const stopRemote = this.listenToOtherProcesses();
    this.stopListening = () => {
      stopLocal();
      stopRemote();
    };
    this.loopDone = this.loop();
  }

  /** On PostgreSQL, API processes without a worker wake this one with NOTIFY. */
  private listenToOtherProcesses(): () => void {
    const { database } = this.deps.config;
    if (database.engine !== 'postgres') return () => undefined;
    const client = new pg.Client({ connectionString: database.url });
    client.on('notification', () => this.wake());
    // A lost listener only costs latency (the idle poll still runs), never deliveries.
    client.on('error', () => undefined);
    client.connect().then(() => client.query('listen plainbase_events')).catch(() => undefined);
    return () => void client.end().catch(() => undefined);
  }

  /** Wake from another process's NOTIFY, or from anything else that knows work arrived. */
  wake(): void {
    this.wakeUp?.();
  }

  /** Stops claiming and waits for the attempts in flight. */
  async stop(): Promise<void> {
    this.running = false;
    this.stopListening?.();
    this.wake();
    await this.loopDone;
    await Promise.allSettled([...this.attempts]);
  }

  /** Everything due now, to the end: fan out, attempt, wait. Tests drive time with this. */
  async drain(): Promise<void> {
    for (;;) {
      while ((await fanOutEvents(this.deps, 500)) > 0);
      const started = await this.attemptDue();
      await Promise.allSettled([...this.attempts]);
      if (started === 0) return;
    }
  }

  private async loop(): Promise<void> {
    while (this.running) {
      try {
        while ((await fanOutEvents(this.deps, 500)) > 0);
        await this.attemptDue();
        if (Date.now() - this.lastPurge > PURGE_EVERY_MS) {
          this.lastPurge = Date.now();
          await purgeOldLogs(this.deps);
        }
      } catch (error) {
        // The database may be briefly unreachable; the next round retries.
        this.options.log.warn({ err: error }, 'delivery worker: a round failed; retrying');
      }
      await this.sleep();
    }
  }

  private sleep(): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, this.options.idleMs);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wakeUp = () => {
        this.wakeUp = null;
        done();
      };
    });
  }

  /** Claims what is due within the free slots and starts those attempts; returns how many. */
  private async attemptDue(): Promise<number> {
    const { concurrency, leaseMs, perWebhook } = this.options;
    const due = await claimDueDeliveries(this.deps, { limit: concurrency - this.attempts.size, leaseMs, perWebhook, inFlight: this.inFlight });
    for (const delivery of due) this.track(this.attempt(delivery), delivery.webhookId);
    return due.length;
  }

  private track(attempt: Promise<void>, webhookId: string): void {
    this.inFlight.set(webhookId, (this.inFlight.get(webhookId) ?? 0) + 1);
    this.attempts.add(attempt);
    void attempt.finally(() => {
      this.attempts.delete(attempt);
      const left = (this.inFlight.get(webhookId) ?? 1) - 1;
      if (left > 0) this.inFlight.set(webhookId, left);
      else this.inFlight.delete(webhookId);
      // A slot is free: more may be waiting.
      this.wake();
    });
  }

  private async attempt(delivery: DueDelivery): Promise<void> {
    const attemptedAt = this.deps.clock.now();
    const result = await senderFor(this.deps).send({
      url: delivery.url,
      secret: delivery.secret,
      webhookId: delivery.webhookId,
      eventId: delivery.eventId,
      eventType: delivery.eventType,
      body: delivery.message,
      timestamp: Math.floor(attemptedAt.getTime() / 1000),
    });
    try {
      await recordAttempt(this.deps, delivery, result, attemptedAt);
    } catch (error) {
      // Unrecorded, the delivery's lease runs out and it is attempted again: at least once.
      this.options.log.warn({ err: error, deliveryId: delivery.id }, 'delivery worker: could not record an attempt; it will be attempted again');
    }
  }
}
