import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Deps } from '../deps.js';
import { onEventsWritten } from '../modules/events/outbox-signal.js';
import { recordAttempts, runRound, withoutResponse, type Claim, type DueDelivery, type FinishedAttempt, type RoundDone } from '../modules/webhooks/delivery-queue.js';
import { senderFor } from '../delivery/guard-options.js';

export interface WorkerOptions {
  /** Calls in flight at once, over all workspaces. */
  concurrency: number;
  /** Calls in flight at once for one workspace: its receivers, however slow, hold at most this many. */
  perWorkspace: number;
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

/**
 * A call in flight costs a socket and a few kilobytes, so the process-wide cap is set far above
 * what one workspace may hold: 32 workspaces whose receivers all hang still leave room for the rest.
 */
const DEFAULTS: WorkerOptions = { concurrency: 1024, perWorkspace: 32, perWebhook: 16, idleMs: 1000, leaseMs: 60_000, log: STDERR_LOG };
const FAN_OUT_BATCH = 500;
/**
 * How long finished attempts may wait to be logged when nothing else calls for a round: the
 * next event's round, a few milliseconds later under steady traffic, carries them too.
 */
const LOG_DELAY_MS = 5;

/**
 * Delivers webhook events: fans new outbox events out into deliveries, claims the ones that are
 * due and attempts them concurrently, each webhook capped so one dead receiver cannot hold up the
 * others. It wakes as soon as events are written in this process, on PostgreSQL NOTIFY from
 * other processes, when an attempt finishes, and at the latest every `idleMs`; every round looks
 * for retries that fell due.
 *
 * The work goes in rounds, so that the database sees a few statements per round rather than a
 * transaction per delivery: a round starts on the event loop's next turn after a wake-up, so
 * every call that finished meanwhile joins it. In one transaction, a round fans out new events
 * (when some may have been written), logs every attempt that finished (group commit) and claims
 * what is due within the free slots; then it starts those calls. The busier the worker, the more
 * each round carries. An attempt is logged by the round after it finished, within a few
 * milliseconds (LOG_DELAY_MS), and until then its claim keeps every other worker off the delivery.
 */
export class DeliveryWorker {
  private readonly options: WorkerOptions;
  /** Calls in flight per webhook id, and per workspace id. */
  private readonly inFlight = new Map<string, number>();
  private readonly inFlightByWorkspace = new Map<string, number>();
  private readonly attempts = new Set<Promise<void>>();
  /** Webhooks the last claim found work for: likely to have more. */
  private readonly lastClaimed = new Set<string>();
  /** Attempts made and not yet logged: logged by the next round, or by stop() and drain(). */
  private finished: FinishedAttempt[] = [];
  /** Whether the outbox may hold events not yet fanned out; set by every wake-up that says so. */
  private eventsWaiting = true;
  /** Whether deliveries may be due that the last claim left (no room, or none ran yet). */
  private dueLeft = true;
  private running = false;
  /** A wake-up that came while no sleep was waiting for it: the next sleep returns at once. */
  private woken = false;
  private wakeUp: (() => void) | null = null;
  private stopListening: (() => void) | null = null;
  private loopDone: Promise<void> | null = null;

  constructor(private readonly deps: Deps, options: Partial<WorkerOptions> = {}) {
    this.options = { ...DEFAULTS, ...options };
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    const stopLocal = onEventsWritten(() => this.wake(true));
    const stopRemote = this.listenToOtherProcesses();
    this.stopListening = () => {
      stopLocal();
      stopRemote();
    };
    this.loopDone = this.loop();
  }

  /** On PostgreSQL, API processes without a worker wake this one with NOTIFY. */
  private listenToOtherProcesses(): () => void {
    return this.deps.dialect.listen('plainbase_events', () => this.wake(true));
  }

  /** Wake from another process's NOTIFY, or from anything else that knows work arrived. */
  wake(eventsWritten = true): void {
    if (eventsWritten) this.eventsWaiting = true;
    this.woken = true;
    this.wakeUp?.();
  }

  /** Stops claiming, waits for the attempts in flight and logs them. */
  async stop(): Promise<void> {
    this.running = false;
    this.stopListening?.();
    this.wake(false);
    await this.loopDone;
    await Promise.allSettled([...this.attempts]);
    // Log what finished; events not fanned out yet wait in the outbox for the next start.
    this.eventsWaiting = false;
    await this.round(false);
  }

  /** Everything due now, to the end: fan out, attempt, wait, log. Tests drive time with this. */
  async drain(): Promise<void> {
    for (;;) {
      this.eventsWaiting = true;
      // Also logs what the previous pass attempted.
      const { fannedOut, due } = await this.round();
      await Promise.allSettled([...this.attempts]);
      if (due.length === 0 && !fannedOut.more) return;
    }
  }

  private async loop(): Promise<void> {
    while (this.running) {
      try {
        const { fannedOut } = await this.round();
        // Some workspace filled its share, or some were left for the next round: go on at once.
        if (fannedOut.more) this.wake(true);
      } catch (error) {
        // The database may be briefly unreachable; the next round retries.
        this.options.log.warn({ err: error }, 'delivery worker: a round failed; retrying');
      }
      await this.sleep(this.options.idleMs);
      // Woken by finished calls alone, with nothing due for their free slots: their log can wait
      // a little for company. Events, or deliveries waiting for room, cut that short.
      if (this.finished.length > 0 && !this.urgent()) await this.sleep(LOG_DELAY_MS, true);
      // Calls that finish in this same turn of the event loop join the coming round.
      await nextTurn();
    }
  }

  /** Whether a round is wanted now rather than soon. */
  private urgent(): boolean {
    return this.eventsWaiting || this.dueLeft || !this.running;
  }

  /**
   * Until a wake-up, or `ms`. An idle sleep that runs out is the safety net behind the wake-ups:
   * events written by a process that could not wake this one, and retries that fell due. With
   * `urgentOnly`, only a wake-up that makes a round urgent ends the sleep early.
   */
  private sleep(ms: number, urgentOnly = false): Promise<void> {
    if (urgentOnly ? this.urgent() : this.woken || !this.running) {
      this.woken = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        if (!urgentOnly) {
          this.eventsWaiting = true;
          this.dueLeft = true;
        }
        done();
      }, ms);
      const done = () => {
        clearTimeout(timer);
        this.wakeUp = null;
        this.woken = false;
        resolve();
      };
      this.wakeUp = () => {
        if (!urgentOnly || this.urgent()) done();
      };
    });
  }

  /**
   * One round (see runRound): fans out new events if some may be waiting, logs the attempts that
   * finished and, when `claiming`, claims what is due within the free slots; then starts those
   * calls.
   */
  private async round(claiming = true): Promise<RoundDone> {
    const fanOut = this.eventsWaiting ? FAN_OUT_BATCH : 0;
    // Cleared first: events written from now on wake the worker again.
    this.eventsWaiting = false;
    const finished = this.finished;
    this.finished = [];
    const claim = claiming ? () => this.claim() : null;
    if (claim) this.dueLeft = false;
    const run = (logging: readonly FinishedAttempt[]) =>
      runRound(this.deps, { fanOut, finished: logging, claim, reuseWorkspaces: true }).catch((error: unknown) => {
        // Nothing happened: the next round tries again.
        if (fanOut > 0) this.eventsWaiting = true;
        if (claim) this.dueLeft = true;
        throw error;
      });
    let done: RoundDone;
    try {
      done = await run(finished);
    } catch (error) {
      if (finished.length === 0) throw error;
      // One attempt that cannot be logged (its delivery deleted with its webhook meanwhile, an
      // answer the database refuses) must not cost the others their log: one at a time, in
      // order, then the rest of the round.
      for (const attempt of finished) await this.recordAlone(attempt);
      done = await run([]);
    }
    if (claim) {
      if (!done.claimedAll) this.dueLeft = true;
      this.lastClaimed.clear();
      for (const delivery of done.due) this.lastClaimed.add(delivery.webhookId);
    }
    for (const delivery of done.due) this.track(this.attempt(delivery), delivery);
    return done;
  }

  /**
   * What to claim now. A row the claim reads beyond what a webhook has room for is read for
   * nothing (a webhook with a backlog fills the front of the queue), so it asks for the room
   * left by the webhooks that have work (in flight, or found by the last claim), plus a few rows
   * to find other webhooks with work: each one found counts in full from the next round on.
   */
  private claim(): Claim {
    const { concurrency, leaseMs, perWebhook, perWorkspace } = this.options;
    let room = Math.ceil(perWebhook / 4);
    for (const count of this.inFlight.values()) room += Math.max(0, perWebhook - count);
    for (const webhookId of this.lastClaimed) if (!this.inFlight.has(webhookId)) room += perWebhook;
    return {
      limit: Math.min(concurrency - this.attempts.size, room),
      leaseMs,
      perWebhook,
      perWorkspace,
      inFlight: this.inFlight,
      inFlightByWorkspace: this.inFlightByWorkspace,
    };
  }

  /**
   * Logs one attempt in its own transaction; if that fails, logs it without the receiver's
   * answer (withoutResponse), so that what the receiver sent can never keep its delivery from
   * moving on. Only when that fails too (the delivery is gone, the database is down) is the
   * attempt left unlogged, for its claim to run out.
   */
  private async recordAlone(attempt: FinishedAttempt): Promise<void> {
    const deliveryId = attempt.delivery.id;
    try {
      await recordAttempts(this.deps, [attempt]);
      return;
    } catch (error) {
      try {
        await recordAttempts(this.deps, [withoutResponse(attempt)]);
        this.options.log.warn({ err: error, deliveryId }, 'delivery worker: could not store the receiver\'s answer; the attempt is logged without it');
      } catch (failure) {
        this.warnUnrecorded(failure, deliveryId);
      }
    }
  }

  private warnUnrecorded(error: unknown, deliveryId: string): void {
    // Unrecorded, the delivery's claim runs out and it is attempted again: at least once.
    this.options.log.warn({ err: error, deliveryId }, 'delivery worker: could not record an attempt; it will be attempted again');
  }

  private track(attempt: Promise<void>, { webhookId, workspaceId }: DueDelivery): void {
    count(this.inFlight, webhookId, 1);
    count(this.inFlightByWorkspace, workspaceId, 1);
    this.attempts.add(attempt);
    void attempt.finally(() => {
      this.attempts.delete(attempt);
      count(this.inFlight, webhookId, -1);
      count(this.inFlightByWorkspace, workspaceId, -1);
      // A slot is free and an attempt waits to be logged.
      this.wake(false);
    });
  }

  /** Never rejects: whatever happens is logged with the attempt, or leaves the claim to run out. */
  private async attempt(delivery: DueDelivery): Promise<void> {
    const attemptedAt = this.deps.clock.now();
    try {
      const result = await senderFor(this.deps).send({
        url: delivery.url,
        secret: delivery.secret,
        webhookId: delivery.webhookId,
        eventId: delivery.eventId,
        eventType: delivery.eventType,
        body: delivery.message,
        timestamp: Math.floor(attemptedAt.getTime() / 1000),
      });
      this.finished.push({ delivery, result, attemptedAt });
    } catch (error) {
      this.warnUnrecorded(error, delivery.id);
    }
  }
}

/** Adds `by` to a count kept in a map, dropping the entry when it reaches zero. */
function count(counts: Map<string, number>, key: string, by: number): void {
  const next = (counts.get(key) ?? 0) + by;
  if (next > 0) counts.set(key, next);
  else counts.delete(key);
}
