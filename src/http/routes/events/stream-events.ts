import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ServerResponse } from 'node:http';
import { Type } from 'typebox';
import type { Deps } from '../../../deps.js';
import { AppError, invalidRequest } from '../../../errors.js';
import type { EventFilter, FeedEvent } from '../../../modules/events/event-feed.js';
import { hubFor } from '../../../modules/events/event-hub.js';
import { EventSubscription } from '../../../modules/events/event-subscription.js';
import type { RegisterRoute } from '../../app-type.js';
import { inWorkspace } from '../../auth.js';
import { EventChoice, eventFilterFor, EVENTS_ACCESS } from './event-filter.js';
import { EVENT_EXAMPLE, EVENT_ID } from './event-schemas.js';
import { placeAfter } from './list-events.js';
import { abilitiesOf, recheckWhileOpen, type RecheckedStream } from './stream-rechecks.js';
import { takeStreamSlot } from './stream-slots.js';

/** A comment line every 15 s keeps proxies from closing a quiet stream. */
const HEARTBEAT_MS = 15_000;
/**
 * Bytes a stream may have waiting for its consumer before it is closed as one that cannot keep up.
 * Events are written one at a time and the bound checked before each, so what waits passes it by
 * at most one event; past it, the stream waits for the consumer to read it all, for at most
 * PLAINBASE_STREAM_DRAIN_SECONDS.
 */
const BUFFER_LIMIT = 1024 * 1024;

type StreamQuery = { types?: string; collections?: string; after?: string };

export const registerStreamEvents: RegisterRoute = (app, deps) =>
  app.get('/v1/events/stream', {
    config: { operation: 'events.stream', access: EVENTS_ACCESS },
    schema: {
      summary: 'The events of the workspace as they happen (server-sent events), resumable with Last-Event-ID',
      description:
        'text/event-stream: for each event, `id:` its id, `event:` its type and `data:` the event message (the same bytes as a webhook delivery body). ' +
        'Reconnect with the Last-Event-ID header (or ?after=evt_…) to resume with no gap and no repeat. A comment line every 15 s keeps the connection alive. ' +
        'The same visibility rules and filters as GET /v1/events. See docs/events.md.',
      tags: ['events'],
      querystring: Type.Object(
        { ...EventChoice, after: Type.Optional(Type.String({ pattern: EVENT_ID.source, description: 'Resume after this event (the Last-Event-ID header wins).' })) },
        { additionalProperties: false },
      ),
      response: {
        200: {
          description: 'A stream of server-sent events.',
          content: {
            'text/event-stream': {
              schema: Type.String(),
              example: `id: ${EVENT_EXAMPLE.id}\nevent: ${EVENT_EXAMPLE.type}\ndata: ${JSON.stringify(EVENT_EXAMPLE)}\n\n`,
            },
          },
        },
      },
    },
    handler: async (request, reply) => {
      const { workspaceId } = inWorkspace(request);
      const { after: afterQuery, ...choice } = request.query as StreamQuery;
      const filter = await eventFilterFor(deps, request, choice);
      const resumeFrom = lastEventId(request) ?? afterQuery;
      const after = resumeFrom === undefined ? null : await placeAfter(deps, workspaceId, resumeFrom, 'headers.last-event-id');
      const release = takeStreamSlot(deps, { workspaceId, caller: request.auth.key?.key.id ?? request.auth.person?.id ?? 'anonymous' });
      const stream = new EventStream(deps, request, reply, choice, release);
      await stream.open(workspaceId, filter, after);
    },
  });

function lastEventId(request: FastifyRequest): string | undefined {
  const header = request.headers['last-event-id'];
  if (header === undefined) return undefined;
  const value = Array.isArray(header) ? header[0]! : header;
  if (!EVENT_ID.test(value)) throw invalidRequest('Last-Event-ID must be an event id (evt_…) this stream sent.', { field: 'headers.last-event-id' });
  return value;
}

declare module '../../../services.js' {
  interface Services {
    /** The app's open event streams, to end them when it stops. */
    openStreams: Set<EventStream>;
  }
}

const streamsOf = (deps: Pick<Deps, 'services'>): Set<EventStream> => deps.services.openStreams;

/** How many streams this app holds open now. */
export function openEventStreams(deps: Pick<Deps, 'services'>): number {
  return streamsOf(deps).size;
}

/** Ends every open stream (the server is stopping). */
export async function closeEventStreams(deps: Pick<Deps, 'services'>): Promise<void> {
  await Promise.all([...streamsOf(deps)].map((stream) => stream.close('the server is shutting down; reconnect with Last-Event-ID to resume')));
}

/**
 * One open stream: writes what its subscription sends as server-sent events, keeps the
 * connection alive, follows its caller as checked again (stream-rechecks.ts: a revoked or expired
 * key, a removed person, ends it; a narrower role narrows what it carries) and closes a consumer
 * that cannot keep up, saying why in a last comment line.
 */
export class EventStream implements RecheckedStream {
  private readonly raw: ServerResponse;
  private subscription: EventSubscription | null = null;
  private heartbeat: NodeJS.Timeout | null = null;
  private stopRechecks: (() => void) | null = null;
  /** What the caller could do when its filter was last computed: the filter is computed again only when that changes. */
  private abilities: string;
  private closed = false;

  constructor(
    private readonly deps: Deps,
    readonly request: FastifyRequest,
    reply: FastifyReply,
    private readonly choice: { types?: string; collections?: string },
    private readonly release: () => void,
  ) {
    reply.hijack();
    this.raw = reply.raw;
    this.abilities = abilitiesOf(request.auth);
  }

  async open(workspaceId: string, filter: EventFilter, after: number | null): Promise<void> {
    streamsOf(this.deps).add(this);
    this.raw.on('close', () => void this.close(null));
    const subscription = new EventSubscription(this.deps, hubFor(this.deps), workspaceId, filter, after, { send: (events) => this.send(events) }, (error) => {
      this.request.log.warn({ err: error }, 'event stream: reading events failed');
      void this.close('the server could not read events; reconnect with Last-Event-ID to resume');
    });
    this.subscription = subscription;
    // "From now" is fixed before the caller hears anything: a client that writes as soon as the
    // stream answers (or says connected) gets its events, however long joining the hub took.
    let joined = true;
    try {
      await subscription.join();
    } catch (error) {
      this.request.log.error({ err: error }, 'event stream: starting failed');
      joined = false;
    }
    if (this.closed) return;
    this.raw.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      // A stream that ends is not followed by another request on its connection: clients reconnect.
      connection: 'close',
      // The stream is the caller's alone: no cache keeps it (cache-headers.ts); no proxy may buffer or rewrite it.
      'cache-control': 'private, no-store, no-transform',
      'x-accel-buffering': 'no',
      'x-request-id': String(this.request.id),
    });
    this.raw.write(': connected\n\n');
    // The head has gone out, so no error body can follow: the stream ends saying why, as a
    // failed read later on ends it (the error goes to the log, not to the caller).
    if (!joined) return void (await this.close('the server could not read events; reconnect with Last-Event-ID to resume'));
    this.heartbeat = setInterval(() => this.raw.write(': heartbeat\n\n'), HEARTBEAT_MS);
    this.stopRechecks = recheckWhileOpen(this.deps, this);
    subscription.begin();
  }

  private async send(events: FeedEvent[]): Promise<boolean> {
    for (const event of events) {
      // Past the bound, nothing more is written until the consumer has read what waits.
      if (this.raw.writableLength > BUFFER_LIMIT && !(await this.drained())) return this.giveUp();
      if (this.closed) return false;
      // Whole events only: a consumer closed between two resumes after the last one it got.
      this.raw.write(`id: ${event.id}\nevent: ${event.type}\ndata: ${event.text}\n\n`);
    }
    return !this.closed;
  }

  /** Whether the consumer read everything waiting for it within the drain timeout. */
  private drained(): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      const done = (ok: boolean) => {
        clearTimeout(timer);
        this.raw.off('drain', onDrain);
        this.raw.off('close', onClose);
        resolve(ok);
      };
      const onDrain = () => done(true);
      const onClose = () => done(false);
      const timer = setTimeout(() => done(false), this.deps.config.streamDrainSeconds * 1000);
      this.raw.on('drain', onDrain);
      this.raw.on('close', onClose);
    });
  }

  private giveUp(): false {
    void this.close('this consumer is not keeping up with the events; reconnect with Last-Event-ID to resume');
    return false;
  }

  end(reason: string): void {
    void this.close(reason);
  }

  /** The caller as checked again: what it may see, computed again only if its abilities changed. */
  async follow(abilities: string): Promise<void> {
    if (this.closed || abilities === this.abilities) return;
    try {
      this.subscription?.setFilter(await eventFilterFor(this.deps, this.request, this.choice));
      this.abilities = abilities;
    } catch (error) {
      if (error instanceof AppError) await this.close(`${error.code}: ${error.message}`);
      // Anything else (the database briefly away): the next check tries again.
    }
  }

  async close(reason: string | null): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.stopRechecks?.();
    streamsOf(this.deps).delete(this);
    this.release();
    this.subscription?.close();
    const socket = this.raw.socket;
    // The consumer went away, or the stream closed while it joined, before its head went out
    // (the server stopping): nothing to say, and its connection goes too.
    if (reason === null || !this.raw.headersSent) {
      socket?.destroy();
      return;
    }
    if (!this.raw.writableEnded) this.raw.end(`: closed: ${reason.replace(/[\r\n]+/g, ' ')}\n\n`);
    // A consumer that reads nothing would keep the socket (and what waits in it) forever.
    setTimeout(() => socket?.destroy(), 5000).unref();
  }
}
