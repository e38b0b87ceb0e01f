import type { Deps } from '../../deps.js';
import { listEvents, type EventFilter, type FeedEvent } from './event-feed.js';
import type { EventHub, HubListener } from './event-hub.js';

/** Where a subscription's events go: an open stream. */
export interface EventSink {
  /**
   * Takes events in sequence order. Resolves when the sink can take more (a full socket buffer
   * drained); rejects, or resolves false, when the subscription should end.
   */
  send(events: FeedEvent[]): Promise<boolean>;
}

/** Events read from the database per step while catching up. */
const CATCH_UP_PAGE = 500;

/**
 * One open event stream of one workspace: every event the filter lets through, in sequence order,
 * from a place in the sequence on, with no gap and none twice. Behind the hub's memory it reads
 * the database a page at a time (catching up after a reconnect); once there, it takes new events
 * from the hub as they come. The filter may change while it runs (the caller's abilities were
 * checked again): events from then on follow the new one.
 */
export class EventSubscription implements HubListener {
  private running = false;
  private again = false;
  private closed = false;
  /** Whether begin() was called: until then the hub's wake-ups send nothing. */
  private begun = false;

  /** `after`: the last place in the sequence the caller has seen (from Last-Event-ID), or null for "from now". */
  constructor(
    private readonly deps: Deps,
    private readonly hub: EventHub,
    readonly workspaceId: string,
    private filter: EventFilter,
    private after: number | null,
    private readonly sink: EventSink,
    private readonly onError: (error: unknown) => void,
  ) {}

  /**
   * Joins the hub and fixes where "from now" begins. The caller tells its consumer that it is
   * connected only after this: an event written once the consumer knows it is connected is
   * sequenced after this place, so it is sent, however long joining took.
   */
  async join(): Promise<void> {
    await this.hub.add(this);
    this.after ??= this.hub.position;
  }

  /** Starts sending, from the place join() fixed. */
  begin(): void {
    this.begun = true;
    this.wake();
  }

  setFilter(filter: EventFilter): void {
    this.filter = filter;
  }

  wake(): void {
    if (this.closed || !this.begun) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    void this.pump()
      .catch((error: unknown) => {
        if (!this.closed) this.onError(error);
      })
      .finally(() => {
        this.running = false;
        if (this.again && !this.closed) {
          this.again = false;
          this.wake();
        }
      });
  }

  /** Stops taking events: a step under way sends nothing more. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.hub.remove(this);
  }

  private async pump(): Promise<void> {
    while (!this.closed) {
      const after = this.after!;
      const upTo = this.hub.position;
      if (after >= upTo) return;
      const recent = this.hub.eventsAfter(this.workspaceId, after);
      let events: FeedEvent[];
      let reached: number;
      if (recent) {
        events = recent.filter((event) => this.accepts(event));
        // Memory holds every event of the workspace up to the hub's position.
        reached = upTo;
      } else {
        // Too far behind for the hub's memory: the database, a page at a time.
        events = await listEvents(this.deps, this.workspaceId, this.filter, { direction: 'oldest-first', from: after, limit: CATCH_UP_PAGE });
        // A short page holds every match up to what was sequenced when it was read, so at least up to `upTo`.
        reached = events.length === CATCH_UP_PAGE ? events[events.length - 1]!.seq : Math.max(upTo, events.at(-1)?.seq ?? 0);
      }
      if (this.closed) return;
      if (events.length > 0 && !(await this.sink.send(events))) {
        this.close();
        return;
      }
      this.after = reached;
    }
  }

  private accepts(event: FeedEvent): boolean {
    return (
      event.workspaceId === this.workspaceId &&
      this.filter.types.has(event.type) &&
      (this.filter.collections === null || this.filter.collections.has(event.collectionId))
    );
  }
}
