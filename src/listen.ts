import { setTimeout as sleep } from 'node:timers/promises';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { newSigningSecret, signPayload } from './delivery/sign.js';

/**
 * `plainbase listen`: a developer's bridge from a Plainbase server to a receiver on their own
 * machine, which no webhook could reach. It holds the server's event stream open and forwards
 * each event as the same signed POST a webhook delivery is, one at a time and in order, printing
 * a line per event; or, with `print`, writes each event as a JSON line. A dropped connection is
 * resumed after the last event handled (Last-Event-ID), so nothing is missed or sent twice.
 * It runs on the developer's machine and calls where they point it: no URL rules apply.
 */
export interface ListenOptions {
  url: string;
  key: string;
  forwardTo: string | null;
  types?: string;
  collections?: string;
  /** Start after this event (evt_…) instead of from now. */
  since?: string;
  /** The whsec_ secret to sign with; a new one (printed) when absent. */
  secret?: string;
  print: boolean;
  /** Where lines go; stdout and stderr by default. */
  out?: (line: string) => void;
  info?: (line: string) => void;
  signal?: AbortSignal;
}

/** The webhook id forwarded calls carry in x-baas-webhook-id: no webhook sends them. */
export const LISTEN_WEBHOOK_ID = 'wh_listen';

/** The longest wait between reconnection attempts. */
const MAX_BACKOFF_MS = 30_000;

export class ListenError extends Error {}

export async function listen(options: ListenOptions): Promise<void> {
  const out = options.out ?? ((line: string) => process.stdout.write(`${line}\n`));
  const info = options.info ?? ((line: string) => process.stderr.write(`${line}\n`));
  const secret = options.secret ?? newSigningSecret();
  if (!secret.startsWith('whsec_')) throw new ListenError('--secret must be a whsec_ secret');
  const streamUrl = new URL('/v1/events/stream', options.url);
  if (options.types) streamUrl.searchParams.set('types', options.types);
  if (options.collections) streamUrl.searchParams.set('collections', options.collections);
  if (!options.print) {
    info(`Forwarding events from ${options.url} to ${options.forwardTo}`);
    info(`Signed with ${secret}${options.secret ? '' : ' (a new secret: give it to your receiver, or set PLAINBASE_LISTEN_SECRET next time)'}`);
  }

  let lastEventId = options.since;
  let backoff = 1000;
  while (!options.signal?.aborted) {
    let response: Response;
    try {
      response = await fetch(streamUrl, {
        headers: { authorization: `Bearer ${options.key}`, accept: 'text/event-stream', ...(lastEventId ? { 'last-event-id': lastEventId } : {}) },
        signal: options.signal,
      });
    } catch (error) {
      if (options.signal?.aborted) return;
      info(`Cannot reach ${options.url} (${describe(error)}); retrying in ${backoff / 1000} s`);
      await sleep(backoff, undefined, { signal: options.signal }).catch(() => undefined);
      backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
      continue;
    }
    if (response.status === 401 || response.status === 403 || response.status === 400) {
      throw new ListenError(`the server refused the stream: ${response.status} ${await errorMessage(response)}`);
    }
    if (!response.ok || !response.body) {
      info(`The server answered ${response.status} (${await errorMessage(response)}); retrying in ${backoff / 1000} s`);
      await sleep(backoff, undefined, { signal: options.signal }).catch(() => undefined);
      backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
      continue;
    }
    backoff = 1000;
    if (!options.print) info('Connected; waiting for events (Ctrl-C to stop)');
    const events: EventSourceMessage[] = [];
    let closedBecause: string | null = null;
    const parser = createParser({
      onEvent: (event) => events.push(event),
      onComment: (comment) => {
        if (comment.trim().startsWith('closed:')) closedBecause = comment.trim().slice('closed:'.length).trim();
      },
    });
    try {
      const decoder = new TextDecoder();
      for await (const chunk of response.body) {
        parser.feed(decoder.decode(chunk as Uint8Array, { stream: true }));
        // One at a time, in order: the next event waits for the receiver's answer to this one.
        while (events.length > 0) {
          const event = events.shift()!;
          if (options.print) out(event.data);
          else out(await forward(options.forwardTo!, secret, event));
          lastEventId = event.id;
        }
      }
    } catch (error) {
      if (options.signal?.aborted) return;
      closedBecause ??= describe(error);
    }
    if (closedBecause && /^(INVALID_API_KEY|API_KEY_EXPIRED|UNAUTHENTICATED|MISSING_SCOPE|FORBIDDEN|NOT_FOUND)\b/.test(closedBecause)) {
      throw new ListenError(`the server closed the stream: ${closedBecause}`);
    }
    info(`The stream closed${closedBecause ? ` (${closedBecause})` : ''}; resuming${lastEventId ? ` after ${lastEventId}` : ''}`);
  }
}

/** One signed POST to the receiver; the line that says how it answered. */
async function forward(target: string, secret: string, event: EventSourceMessage): Promise<string> {
  const timestamp = String(Math.floor(Date.now() / 1000));
  const started = performance.now();
  const head = `${new Date().toISOString()}  ${event.event ?? 'message'}  ${event.id ?? ''}  →`;
  try {
    const response = await fetch(target, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'user-agent': 'Plainbase-Listen/1',
        'x-baas-event': event.event ?? '',
        'x-baas-delivery': event.id ?? '',
        'x-baas-timestamp': timestamp,
        'x-baas-signature': signPayload(secret, timestamp, event.data),
        'x-baas-webhook-id': LISTEN_WEBHOOK_ID,
      },
      body: event.data,
      redirect: 'manual',
      signal: AbortSignal.timeout(10_000),
    });
    await response.arrayBuffer();
    return `${head} ${response.status} (${Math.round(performance.now() - started)} ms)`;
  } catch (error) {
    return `${head} failed: ${describe(error)}`;
  }
}

async function errorMessage(response: Response): Promise<string> {
  try {
    const body = (await response.json()) as { error?: { code?: string; message?: string } };
    return body.error ? `${body.error.code}: ${body.error.message}` : response.statusText;
  } catch {
    return response.statusText;
  }
}

function describe(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  if (cause?.code) return `${cause.code}${cause.message ? `: ${cause.message}` : ''}`;
  return error instanceof Error ? error.message : String(error);
}
