import { request } from 'node:http';

export interface ServerSentEvent {
  id?: string;
  event?: string;
  data: string;
}

/**
 * A reader of a real `text/event-stream` over HTTP (node:http, so a test can also stop reading):
 * collects events and comment lines as they arrive, and tells when the server closed the stream.
 */
export class EventStreamReader {
  readonly events: ServerSentEvent[] = [];
  readonly comments: string[] = [];
  status = 0;
  headers: Record<string, string | string[] | undefined> = {};
  ended = false;
  body = '';
  private buffer = '';
  private waiters = new Set<() => void>();
  private destroy: () => void = () => undefined;

  static open(url: string, headers: Record<string, string>): Promise<EventStreamReader> {
    const reader = new EventStreamReader();
    return new Promise((resolve, reject) => {
      const req = request(url, { headers: { accept: 'text/event-stream', ...headers } }, (response) => {
        reader.status = response.statusCode ?? 0;
        reader.headers = response.headers;
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => reader.take(chunk));
        response.on('end', () => reader.finish());
        response.on('close', () => reader.finish());
        response.on('error', () => reader.finish());
        resolve(reader);
      });
      reader.destroy = () => req.destroy();
      req.on('error', reject);
      req.end();
    });
  }

  private take(chunk: string): void {
    this.body += chunk;
    this.buffer += chunk;
    for (let end = this.buffer.indexOf('\n\n'); end >= 0; end = this.buffer.indexOf('\n\n')) {
      const block = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + 2);
      const event: ServerSentEvent = { data: '' };
      let isEvent = false;
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) this.comments.push(line.slice(1).trim());
        else if (line.startsWith('id: ')) (event.id = line.slice(4)), (isEvent = true);
        else if (line.startsWith('event: ')) (event.event = line.slice(7)), (isEvent = true);
        else if (line.startsWith('data: ')) (event.data += line.slice(6)), (isEvent = true);
      }
      if (isEvent) this.events.push(event);
    }
    this.notify();
  }

  private finish(): void {
    this.ended = true;
    this.notify();
  }

  private notify(): void {
    for (const waiter of this.waiters) waiter();
  }

  /** Resolves once `check` holds, or rejects after `timeoutMs`. */
  until(check: (reader: EventStreamReader) => boolean, timeoutMs = 5000, what = 'the stream'): Promise<void> {
    return new Promise((resolve, reject) => {
      const test = () => {
        if (!check(this)) return;
        clearTimeout(timer);
        this.waiters.delete(test);
        resolve();
      };
      const timer = setTimeout(() => {
        this.waiters.delete(test);
        reject(new Error(`${what}: not within ${timeoutMs} ms (events ${this.events.length}, comments ${JSON.stringify(this.comments)}, ended ${this.ended})`));
      }, timeoutMs);
      this.waiters.add(test);
      test();
    });
  }

  close(): void {
    this.destroy();
  }
}
