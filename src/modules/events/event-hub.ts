import type { Deps } from '../../deps.js';
import { lastSequenced, readSequencedAfter, type FeedEvent } from './event-feed.js';
import { onEventsSequenced } from './outbox-signal.js';

/** Something that wants to hear when events may be waiting (an open event stream). */
export interface HubListener {
  wake(): void;
}

export interface HubOptions {
  /** Recent events kept in memory: streams that are this close behind read nothing from the database. */
  keep: number;
  /** Longest wait between reads when nothing wakes the hub: the safety net behind the wake-ups. */
  pollMs: number;
}

const DEFAULTS: HubOptions = { keep: 20_000, pollMs: 1000 };
const READ_BATCH = 1000;

/**
 * One reader of newly sequenced events per process, for every open event stream: however many
 * streams there are, each wake-up costs one query. It reads what the worker sequenced (woken in
 * this process by the worker, from other processes by PostgreSQL's NOTIFY, and at the latest
 * every `pollMs`), keeps the last `keep` events in memory and wakes the streams, which take what
 * they may see from here, or from the database when they are further behind (EventSubscription).
 * It runs only while a stream is open.
 */
export class EventHub {
  private readonly options: HubOptions;
  private readonly listeners = new Set<HubListener>();
  private recent: FeedEvent[] = [];
  /** The last place in the sequence read; every event up to it is in `recent` or older than its first. */
  private last = 0;
  private running: Promise<void> | null = null;
  private reading: Promise<void> | null = null;
  private readAgain = false;
  private stopWaking: (() => void) | null = null;
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly deps: Deps, options: Partial<HubOptions> = {}) {
    this.options = { ...DEFAULTS, ...options };
  }

  /** The last place in the sequence the hub has read. */
  get position(): number {
    return this.last;
  }

  /** Starts the hub if it is not running (the first stream), and adds the listener. */
  async add(listener: HubListener): Promise<void> {
    this.running ??= this.start();
    await this.running;
    this.listeners.add(listener);
  }

  remove(listener: HubListener): void {
    this.listeners.delete(listener);
    if (this.listeners.size === 0) this.stop();
  }

  /**
   * The events sequenced after `after`, up to `position`, from memory; null when memory no longer
   * holds all of them (the caller reads the database instead).
   */
  eventsAfter(after: number): FeedEvent[] | null {
    if (after >= this.last) return [];
    const first = this.recent[0];
    if (!first || first.seq > after + 1) return null;
    // The first event after `after`: places are increasing, so a binary search finds it.
    let low = 0;
    let high = this.recent.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (this.recent[middle]!.seq <= after) low = middle + 1;
      else high = middle;
    }
    return this.recent.slice(low);
  }

  /** Reads what was sequenced since the last read, then wakes every listener. */
  poke(): void {
    if (this.reading) {
      this.readAgain = true;
      return;
    }
    this.reading = this.read().finally(() => {
      this.reading = null;
      if (this.readAgain && this.running) {
        this.readAgain = false;
        this.poke();
      }
    });
  }

  /** Stops reading and forgets its listeners; a later add starts it again. */
  close(): void {
    this.listeners.clear();
    this.stop();
  }

  private async start(): Promise<void> {
    this.last = await lastSequenced(this.deps.db);
    this.recent = [];
    const stopLocal = onEventsSequenced(() => this.poke());
    const stopRemote = this.deps.dialect.listen('plainbase_events_sequenced', () => this.poke());
    this.stopWaking = () => {
      stopLocal();
      stopRemote();
    };
    this.timer = setInterval(() => this.poke(), this.options.pollMs);
    this.timer.unref();
  }

  private stop(): void {
    this.stopWaking?.();
    this.stopWaking = null;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.running = null;
    this.recent = [];
  }

  private async read(): Promise<void> {
    let found = false;
    try {
      for (;;) {
        const events = await readSequencedAfter(this.deps.db, this.last, READ_BATCH);
        if (events.length === 0 || !this.running) break;
        this.recent.push(...events);
        this.last = events[events.length - 1]!.seq;
        found = true;
        if (events.length < READ_BATCH) break;
      }
    } catch {
      // The database may be briefly unreachable: the next wake-up or poll reads again.
    }
    if (this.recent.length > this.options.keep) this.recent = this.recent.slice(this.recent.length - this.options.keep);
    if (found) for (const listener of this.listeners) listener.wake();
  }
}

const hubs = new WeakMap<Deps, EventHub>();

/** The hub of a running app, made on first use. */
export function hubFor(deps: Deps): EventHub {
  let hub = hubs.get(deps);
  if (!hub) {
    hub = new EventHub(deps);
    hubs.set(deps, hub);
  }
  return hub;
}

export function closeHub(deps: Deps): void {
  hubs.get(deps)?.close();
}
