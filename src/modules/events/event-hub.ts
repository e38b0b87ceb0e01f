import type { Deps } from '../../deps.js';
import { rowLimit } from '../../db/row-limit.js';
import { lastSequenced, toFeedEvent, type FeedEvent } from './event-feed.js';
import { onEventsSequenced, onRecordsErased } from './outbox-signal.js';

/** Something that wants to hear when events of its workspace may be waiting (an open event stream). */
export interface HubListener {
  readonly workspaceId: string;
  wake(): void;
}

export interface HubOptions {
  /** Most recent events kept in memory: streams that are this close behind read nothing from the database. */
  keep: number;
  /** Most bytes of event messages kept in memory, over all workspaces. */
  keepBytes: number;
  /** Longest wait between reads when nothing wakes the hub: the safety net behind the wake-ups. */
  pollMs: number;
}

const DEFAULTS: HubOptions = { keep: 20_000, keepBytes: 32 * 1024 * 1024, pollMs: 1000 };
/** Events read per statement: bounds what one read holds at once, however large the events. */
const READ_BATCH = 200;

/** A workspace with at least one open stream in this process. */
interface Watched {
  streams: number;
  /**
   * The place from which the hub holds every one of its events (bounds allowing): where the first
   * read that included it began; null until then (its streams read the database meanwhile).
   */
  since: number | null;
}

/**
 * One reader of newly sequenced events per process, for every open event stream: however many
 * streams there are, each wake-up costs one statement (woken in this process by the worker, from
 * other processes by PostgreSQL's NOTIFY, and at the latest every `pollMs`). It reads, and keeps
 * in memory, only the events of workspaces that have an open stream here, the most recent ones
 * up to `keep` events and `keepBytes` bytes; a stream further behind reads the database instead
 * (EventSubscription). A workspace's events are dropped when its last stream closes, and
 * everything when the last stream of the process does.
 */
export class EventHub {
  private readonly options: HubOptions;
  private readonly listeners = new Set<HubListener>();
  private readonly watched = new Map<string, Watched>();
  private recent: FeedEvent[] = [];
  private recentBytes = 0;
  /** Events up to this place may have been dropped from `recent` to keep within its bounds. */
  private floor = 0;
  /** The last place in the sequence read. */
  private last = 0;
  /** Which run of the hub this is: a read begun before a stop keeps nothing. */
  private run = 0;
  /** Erasures heard of so far: a read begun before one keeps nothing, since it may hold erased data. */
  private erasures = 0;
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

  /** Bytes of event messages held in memory: of one workspace, or of all. */
  retainedBytes(workspaceId?: string): number {
    if (workspaceId === undefined) return this.recentBytes;
    let bytes = 0;
    for (const event of this.recent) if (event.workspaceId === workspaceId) bytes += event.text.length;
    return bytes;
  }

  /** Starts the hub if it is not running (the first stream), and adds the listener. */
  async add(listener: HubListener): Promise<void> {
    // The hub may stop while this waits (its last other stream closed): then it starts again.
    for (;;) {
      const running = (this.running ??= this.start().catch((error: unknown) => {
        // The database was away: the next stream to open tries again.
        this.running = null;
        throw error;
      }));
      await running;
      if (this.running === running) break;
    }
    this.listeners.add(listener);
    const watched = this.watched.get(listener.workspaceId);
    if (watched) watched.streams++;
    else this.watched.set(listener.workspaceId, { streams: 1, since: null });
  }

  remove(listener: HubListener): void {
    if (!this.listeners.delete(listener)) return;
    const watched = this.watched.get(listener.workspaceId);
    if (watched && --watched.streams === 0) {
      this.watched.delete(listener.workspaceId);
      this.keepOnly((event) => event.workspaceId !== listener.workspaceId);
    }
    if (this.listeners.size === 0) this.stop();
  }

  /**
   * The workspace's events sequenced after `after`, up to `position`, from memory; null when
   * memory may not hold all of them (the caller reads the database instead).
   */
  eventsAfter(workspaceId: string, after: number): FeedEvent[] | null {
    if (after >= this.last) return [];
    const watched = this.watched.get(workspaceId);
    if (!watched || watched.since === null || after < watched.since || after < this.floor) return null;
    // The first event after `after`: places are increasing, so a binary search finds it.
    let low = 0;
    let high = this.recent.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (this.recent[middle]!.seq <= after) low = middle + 1;
      else high = middle;
    }
    const events: FeedEvent[] = [];
    for (let index = low; index < this.recent.length; index++) if (this.recent[index]!.workspaceId === workspaceId) events.push(this.recent[index]!);
    return events;
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
    const run = this.run;
    const last = await lastSequenced(this.deps.db);
    // Stopped while starting: whoever waits starts it again.
    if (run !== this.run) return;
    this.last = last;
    this.floor = last;
    const stops = [
      onEventsSequenced(() => this.poke()),
      this.deps.dialect.listen('plainbase_events_sequenced', () => this.poke()),
      // Record data deleted for good (docs/security.md, "What is erased and when") must not be
      // served from memory: here, the workspace is known; from another process, it is not.
      onRecordsErased((erased) => this.forget(erased.workspaceId)),
      this.deps.dialect.listen('plainbase_records_erased', () => this.forget(null)),
    ];
    this.stopWaking = () => {
      for (const stop of stops) stop();
    };
    this.timer = setInterval(() => this.poke(), this.options.pollMs);
    this.timer.unref();
  }

  private stop(): void {
    this.run++;
    this.stopWaking?.();
    this.stopWaking = null;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.running = null;
    this.watched.clear();
    this.recent = [];
    this.recentBytes = 0;
  }

  /**
   * Drops what memory holds of a workspace's events (of every workspace: null), so that its
   * streams read them from the database, where erased data is gone, until reads fill memory again.
   */
  private forget(workspaceId: string | null): void {
    this.erasures++;
    this.keepOnly((event) => workspaceId !== null && event.workspaceId !== workspaceId);
    for (const [id, watched] of this.watched) if (workspaceId === null || id === workspaceId) watched.since = null;
  }

  private async read(): Promise<void> {
    const run = this.run;
    const erasures = this.erasures;
    let found = false;
    try {
      // Everything up to `upTo` is sequenced and visible (the worker sequences in order), so
      // reading only the watched workspaces' events up to it skips nobody's.
      const upTo = await lastSequenced(this.deps.db);
      while (run === this.run && this.last < upTo) {
        const workspaces: string[] = [];
        for (const [workspaceId, watched] of this.watched) {
          // This read covers the workspace from here on.
          watched.since ??= this.last;
          workspaces.push(workspaceId);
        }
        const events = workspaces.length === 0 ? [] : await readWatchedAfter(this.deps, workspaces, this.last, upTo, READ_BATCH);
        if (run !== this.run) return;
        for (const event of events) {
          // Read before an erasure was heard of: it may be erased data (forget() made streams read the database).
          if (!this.watched.has(event.workspaceId) || erasures !== this.erasures) continue;
          this.recent.push(event);
          this.recentBytes += event.text.length;
        }
        this.last = events.length === READ_BATCH ? events[events.length - 1]!.seq : upTo;
        found ||= events.length > 0;
        this.trim();
      }
    } catch {
      // The database may be briefly unreachable: the next wake-up or poll reads again.
    }
    if (found && run === this.run) for (const listener of this.listeners) listener.wake();
  }

  /** Drops the oldest events past either bound; streams that still need them read the database. */
  private trim(): void {
    let drop = 0;
    let bytes = this.recentBytes;
    while (drop < this.recent.length && (this.recent.length - drop > this.options.keep || bytes > this.options.keepBytes)) {
      bytes -= this.recent[drop]!.text.length;
      drop++;
    }
    if (drop === 0) return;
    this.floor = this.recent[drop - 1]!.seq;
    this.recent = this.recent.slice(drop);
    this.recentBytes = bytes;
  }

  private keepOnly(keep: (event: FeedEvent) => boolean): void {
    this.recent = this.recent.filter(keep);
    this.recentBytes = this.recent.reduce((bytes, event) => bytes + event.text.length, 0);
  }
}

/** The watched workspaces' events sequenced in (after, upTo], oldest first: other workspaces' never leave the database. */
async function readWatchedAfter(deps: Deps, workspaces: string[], after: number, upTo: number, limit: number): Promise<FeedEvent[]> {
  const rows = await deps.db
    .selectFrom('events')
    .select(['seq', 'id', 'type', 'created_at', 'workspace_id', 'collection_id', 'data'])
    .where('seq', '>', after)
    .where('seq', '<=', upTo)
    .where('workspace_id', 'in', workspaces)
    .orderBy('seq')
    .limit(rowLimit(limit))
    .execute();
  return rows.map(toFeedEvent);
}

declare module '../../services.js' {
  interface Services {
    /** The one reader of newly sequenced events behind every event stream of the app. */
    eventHub: EventHub;
  }
}

/** The hub of a running app. */
export const hubFor = (deps: Pick<Deps, 'services'>): EventHub => deps.services.eventHub;

export function closeHub(deps: Pick<Deps, 'services'>): void {
  deps.services.eventHub.close();
}
