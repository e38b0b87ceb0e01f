import { useEffect, useRef } from 'react';
import { ApiError, readEventStream, type StreamedEvent } from '../api.js';

/** Waits before reconnecting: 1 s, doubling up to 30 s, back to 1 s once a stream opens. */
const FIRST_RETRY_MS = 1000;
const LAST_RETRY_MS = 30_000;

/**
 * Holds the API's event stream at `path` open while `path` is not null, calling `onEvent` for each
 * event. A stream that ends or fails is opened again after the last event heard (Last-Event-ID),
 * so nothing in between is missed; one the API refuses (401, 403, 404) stays closed. Changing
 * `path` starts afresh, from now.
 */
export function useEventStream(path: string | null, onEvent: (event: StreamedEvent) => void): void {
  const handler = useRef(onEvent);
  handler.current = onEvent;
  useEffect(() => {
    if (path === null) return;
    const stop = new AbortController();
    let lastEventId: string | null = null;
    void (async () => {
      let wait = FIRST_RETRY_MS;
      while (!stop.signal.aborted) {
        try {
          await readEventStream(path, lastEventId, (event) => {
            lastEventId = event.id;
            wait = FIRST_RETRY_MS;
            handler.current(event);
          }, stop.signal);
        } catch (error) {
          if (stop.signal.aborted) return;
          if (error instanceof ApiError && [401, 403, 404].includes(error.status)) return;
        }
        await new Promise((resolve) => setTimeout(resolve, wait));
        wait = Math.min(wait * 2, LAST_RETRY_MS);
      }
    })();
    return () => stop.abort();
  }, [path]);
}
