import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ServerResponse } from 'node:http';
import { Type } from 'typebox';
import type { Deps } from '../../../deps.js';
import { AppError, invalidRequest, rateLimited } from '../../../errors.js';
import type { EventFilter, FeedEvent } from '../../../modules/events/event-feed.js';
import { hubFor } from '../../../modules/events/event-hub.js';
import { EventSubscription } from '../../../modules/events/event-subscription.js';
import type { RegisterRoute } from '../../app-type.js';
import { authenticate, inWorkspace } from '../../auth.js';
import { EventChoice, eventFilterFor, EVENTS_ACCESS } from './event-filter.js';
import { EVENT_EXAMPLE, EVENT_ID } from './event-schemas.js';
import { placeAfter } from './list-events.js';

/** A comment line every 15 s keeps proxies from closing a quiet stream. */
const HEARTBEAT_MS = 15_000;
/** How often the caller's credential and abilities are checked again while the stream is open. */
const RECHECK_MS = 1000;
/** Bytes a stream may have waiting for its consumer before it is closed as one that cannot keep up. */
const BUFFER_LIMIT = 1024 * 1024;
/** How long a full socket may take to drain before the stream is closed for the same reason. */
const DRAIN_TIMEOUT_MS = 10_000;

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
      const release = takeStreamSlot(deps, request.auth.key?.key.id ?? request.auth.person?.id ?? 'anonymous');
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

/** Open streams per process and per caller (key or person): the limits of the configuration. */
const openStreams = new WeakMap<Deps, { total: number; perCaller: Map<string, number>; streams: Set<EventStream> }>();

function streamsOf(deps: Deps) {
  let open = openStreams.get(deps);
  if (!open) {
    open = { total: 0, perCaller: new Map(), streams: new Set() };
    openStreams.set(deps, open);
  }
  return open;
}

/** Counts one more open stream, or refuses with 429; returns what gives the slot back. */
function takeStreamSlot(deps: Deps, caller: string): () => void {
  const open = streamsOf(deps);
  const mine = open.perCaller.get(caller) ?? 0;
  if (open.total >= deps.config.streamsPerProcess) throw rateLimited(5, 'This server holds as many event streams as it may; try again shortly.');
  if (mine >= deps.config.streamsPerCaller) {
    throw rateLimited(5, `This caller already holds ${deps.config.streamsPerCaller} event streams open, the most it may; close one first.`);
  }
  open.total++;
  open.perCaller.set(caller, mine + 1);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    open.total--;
    const left = (open.perCaller.get(caller) ?? 1) - 1;
    if (left > 0) open.perCaller.set(caller, left);
    else open.perCaller.delete(caller);
  };
}

/** Ends every open stream (the server is stopping). */
export async function closeEventStreams(deps: Deps): Promise<void> {
  await Promise.all([...streamsOf(deps).streams].map((stream) => stream.close('the server is shutting down; reconnect with Last-Event-ID to resume')));
}

/**
 * One open stream: writes what its subscription sends as server-sent events, keeps the
 * connection alive, checks the caller again every second (a revoked or expired key, a removed
 * person, ends it; a narrower role narrows what it carries) and closes a consumer that cannot
 * keep up, saying why in a last comment line.
 */
class EventStream {
  private readonly raw: ServerResponse;
  private subscription: EventSubscription | null = null;
  private timers: NodeJS.Timeout[] = [];
  private closed = false;

  constructor(
    private readonly deps: Deps,
    private readonly request: FastifyRequest,
    reply: FastifyReply,
    private readonly choice: { types?: string; collections?: string },
    private readonly release: () => void,
  ) {
    reply.hijack();
    this.raw = reply.raw;
  }

  async open(workspaceId: string, filter: EventFilter, after: number | null): Promise<void> {
    streamsOf(this.deps).streams.add(this);
    this.raw.on('close', () => void this.close(null));
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
    const subscription = new EventSubscription(this.deps, hubFor(this.deps), workspaceId, filter, after, { send: (events) => this.send(events) }, (error) => {
      this.request.log.warn({ err: error }, 'event stream: reading events failed');
      void this.close('the server could not read events; reconnect with Last-Event-ID to resume');
    });
    this.subscription = subscription;
    this.timers.push(setInterval(() => this.raw.write(': heartbeat\n\n'), HEARTBEAT_MS), setInterval(() => void this.recheck(), RECHECK_MS));
    await subscription.start();
  }

  private async send(events: FeedEvent[]): Promise<boolean> {
    if (this.closed) return false;
    let text = '';
    for (const event of events) text += `id: ${event.id}\nevent: ${event.type}\ndata: ${event.text}\n\n`;
    const flowing = this.raw.write(text);
    if (this.raw.writableLength > BUFFER_LIMIT) return this.giveUp();
    if (flowing) return true;
    const drained = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), DRAIN_TIMEOUT_MS);
      const done = (ok: boolean) => {
        clearTimeout(timer);
        resolve(ok);
      };
      this.raw.once('drain', () => done(true));
      this.raw.once('close', () => done(false));
    });
    return drained || this.giveUp();
  }

  private giveUp(): false {
    void this.close('this consumer is not keeping up with the events; reconnect with Last-Event-ID to resume');
    return false;
  }

  /** The caller as it is now: still allowed in, and what it may see. */
  private async recheck(): Promise<void> {
    if (this.closed) return;
    try {
      await authenticate(this.deps, this.request, EVENTS_ACCESS);
      this.subscription?.setFilter(await eventFilterFor(this.deps, this.request, this.choice));
    } catch (error) {
      if (error instanceof AppError) await this.close(`${error.code}: ${error.message}`);
      // Anything else (the database briefly away): the next check tries again.
    }
  }

  async close(reason: string | null): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const timer of this.timers) clearInterval(timer);
    streamsOf(this.deps).streams.delete(this);
    this.release();
    this.subscription?.close();
    const socket = this.raw.socket;
    // The consumer went away: nothing to say, and its connection goes too.
    if (reason === null) {
      socket?.destroy();
      return;
    }
    if (!this.raw.writableEnded) this.raw.end(`: closed: ${reason.replace(/[\r\n]+/g, ' ')}\n\n`);
    // A consumer that reads nothing would keep the socket (and what waits in it) forever.
    setTimeout(() => socket?.destroy(), 5000).unref();
  }
}
