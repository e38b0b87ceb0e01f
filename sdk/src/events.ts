import { PlainbaseError } from './errors.js';
import type { Transport } from './http.js';
import type { PlainbaseEvent } from './webhook-signature.js';

/** What events to read: types and collections (ids or names) as comma-free lists. */
export interface EventChoice {
  types?: string[];
  collections?: string[];
}

export interface EventListOptions extends EventChoice {
  /** Oldest first, the events after this one (`evt_…`); without it, newest first. */
  after?: string;
  /** Events per page (1–1000, default 50); iterating goes on across pages until the end. */
  limit?: number;
  signal?: AbortSignal;
}

export interface SubscribeOptions extends EventChoice {
  /** Start after this event (`evt_…`) instead of from now: catch up, then go on live. */
  after?: string;
  /** Called when the stream drops and is opened again, with the reason; the events go on where they were. */
  onReconnect?: (reason: string) => void;
  /** Called when the stream stops for good (the server refused the key, or `close()`). */
  onClose?: (error: PlainbaseError | null) => void;
}

export interface Subscription {
  /** The last event handed to the callback: where a new subscription would resume. */
  readonly lastEventId: string | null;
  /** Stops the stream; resolves once it has stopped. */
  close(): Promise<void>;
  /** Resolves when the subscription stops (close(), or a refusal it cannot get past). */
  readonly closed: Promise<void>;
}

interface EventPage {
  data: PlainbaseEvent[];
  nextCursor: string | null;
}

const FIRST_RETRY_MS = 500;
const LAST_RETRY_MS = 30_000;
/** Refusals that another try cannot change: the subscription stops. */
const FINAL = new Set([400, 401, 403, 404]);
/** A stream the server ended with `: closed: CODE: …` for one of these ends the subscription too. */
const FINAL_CLOSINGS: Record<string, number> = {
  INVALID_API_KEY: 401,
  API_KEY_EXPIRED: 401,
  UNAUTHENTICATED: 401,
  MISSING_SCOPE: 403,
  FORBIDDEN: 403,
  COLLECTION_NOT_ALLOWED: 403,
  NOT_FOUND: 404,
};

/** The workspace's events: the feed (`list`) and the live stream (`subscribe`). See docs/events.md. */
export class Events {
  constructor(private readonly http: Transport) {}

  /**
   * The feed as an async iterator across pages: newest first, or oldest first after `after`.
   * Each item is the event message, the same as a webhook delivery's body.
   */
  async *list(options: EventListOptions = {}): AsyncGenerator<PlainbaseEvent, void, undefined> {
    const { signal, ...choice } = options;
    let cursor: string | undefined;
    do {
      const page = await this.http.json<EventPage>('get', '/v1/events', {
        query: cursor === undefined ? { ...queryOf(choice), after: choice.after, limit: choice.limit } : { ...queryOf(choice), limit: choice.limit, cursor },
        signal,
      });
      yield* page.data;
      cursor = page.nextCursor ?? undefined;
    } while (cursor !== undefined);
  }

  /**
   * Calls `onEvent` for each event as it happens, one at a time and in order (an async callback
   * is awaited before the next). A dropped stream is opened again after the last event handed
   * over (Last-Event-ID), with growing waits, so none is missed or repeated; a refusal (a revoked
   * key, a missing scope) stops it and is passed to `onClose`.
   */
  subscribe(options: SubscribeOptions, onEvent: (event: PlainbaseEvent) => void | Promise<void>): Subscription {
    const stop = new AbortController();
    let lastEventId = options.after ?? null;
    const run = async (): Promise<PlainbaseError | null> => {
      let wait = FIRST_RETRY_MS;
      while (!stop.signal.aborted) {
        let reason: string | undefined;
        try {
          const response = await this.http.send('get', '/v1/events/stream', {
            query: queryOf(options),
            headers: { accept: 'text/event-stream', 'last-event-id': lastEventId ?? undefined },
            signal: stop.signal,
          });
          for await (const frame of readFrames(response.body!)) {
            if (frame.comment?.startsWith('closed:')) reason = frame.comment.slice('closed:'.length).trim();
            if (frame.id === undefined || frame.data === undefined) continue;
            await onEvent(JSON.parse(frame.data) as PlainbaseEvent);
            lastEventId = frame.id;
            wait = FIRST_RETRY_MS;
          }
          reason ??= 'the stream ended';
          const code = reason.split(':')[0]!;
          if (Object.hasOwn(FINAL_CLOSINGS, code)) {
            return new PlainbaseError({ code: code as PlainbaseError['code'], status: FINAL_CLOSINGS[code]!, message: reason.slice(code.length + 1).trim() });
          }
        } catch (error) {
          if (stop.signal.aborted) return null;
          if (error instanceof PlainbaseError && FINAL.has(error.status)) return error;
          reason = (error as Error)?.message ?? String(error);
        }
        if (stop.signal.aborted) return null;
        options.onReconnect?.(reason);
        await pause(wait, stop.signal);
        wait = Math.min(wait * 2, LAST_RETRY_MS);
      }
      return null;
    };
    const closed = run().then(
      (error) => options.onClose?.(error),
      (error: unknown) => options.onClose?.(error instanceof PlainbaseError ? error : new PlainbaseError({ code: 'NETWORK_ERROR', status: 0, message: String(error), cause: error })),
    );
    return {
      get lastEventId() {
        return lastEventId;
      },
      closed,
      close: async () => {
        stop.abort();
        await closed;
      },
    };
  }
}

function queryOf(choice: EventChoice): Record<string, string | undefined> {
  return { types: choice.types?.join(','), collections: choice.collections?.join(',') };
}

interface Frame {
  id?: string;
  event?: string;
  data?: string;
  comment?: string;
}

/**
 * The frames of a text/event-stream body. Written here, not taken from a package, so that the
 * SDK keeps no dependencies (it installs offline and runs in every runtime); Plainbase's streams
 * use only `id`, `event`, one `data` line and comments.
 */
async function* readFrames(body: ReadableStream<Uint8Array>): AsyncGenerator<Frame, void, undefined> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      let end: number;
      while ((end = buffer.search(/\r?\n\r?\n/)) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end).replace(/^\r?\n\r?\n/, '');
        const frame: Frame = {};
        for (const line of block.split(/\r?\n/)) {
          const colon = line.indexOf(':');
          const field = colon < 0 ? line : line.slice(0, colon);
          const text = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
          if (field === '') frame.comment = text;
          else if (field === 'id') frame.id = text;
          else if (field === 'event') frame.event = text;
          else if (field === 'data') frame.data = frame.data === undefined ? text : `${frame.data}\n${text}`;
        }
        yield frame;
      }
    }
  } finally {
    reader.releaseLock();
  }
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    }, { once: true });
  });
}
