import http from 'node:http';

export interface JsonReply<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

/** One JSON call for set-up work (sign-in, collection, index, sanity checks); not used under load. */
export async function callJson<T = any>(
  baseUrl: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: unknown,
): Promise<JsonReply<T>> {
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  let parsed: unknown = text;
  if ((response.headers.get('content-type') ?? '').includes('json') && text) parsed = JSON.parse(text);
  return { status: response.status, body: parsed as T, headers: response.headers };
}

/** Fails with the reply in the message unless the status is the one expected. */
export function expectStatus<T>(reply: JsonReply<T>, status: number, what: string): JsonReply<T> {
  if (reply.status !== status) throw new Error(`${what}: expected ${status}, got ${reply.status} ${JSON.stringify(reply.body).slice(0, 500)}`);
  return reply;
}

/** Runs `task(i)` for i in 0..count-1 with at most `concurrency` in flight. */
export async function inParallel<T>(count: number, concurrency: number, task: (i: number) => Promise<T>): Promise<T[]> {
  const results: T[] = new Array(count);
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      results[i] = await task(i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
  return results;
}

export interface StreamUpload {
  status: number;
  body: string;
  seconds: number;
  bytes: number;
}

/**
 * Streams a generated body (chunked transfer encoding, backpressure honoured) and times it from
 * the first byte sent to the last byte of the answer. The body is never held in memory whole.
 */
export async function streamUpload(options: {
  url: string;
  headers: Record<string, string>;
  chunks: () => Generator<string>;
}): Promise<StreamUpload> {
  const started = process.hrtime.bigint();
  let bytes = 0;
  return new Promise((resolve, reject) => {
    let answered = false;
    let finished = false;
    const request = http.request(options.url, { method: 'POST', headers: options.headers }, (response) => {
      answered = true;
      // An answer before the body is all sent is a refusal: stop sending.
      finished = true;
      const parts: Buffer[] = [];
      response.on('data', (part: Buffer) => parts.push(part));
      response.on('end', () => {
        resolve({
          status: response.statusCode ?? 0,
          body: Buffer.concat(parts).toString('utf8'),
          seconds: Number(process.hrtime.bigint() - started) / 1e9,
          bytes,
        });
        request.destroy();
      });
      response.on('error', reject);
    });
    // Writes still buffered when the server closes fail on the socket after the answer is in.
    request.on('socket', (socket) => socket.on('error', () => undefined));
    const chunks = options.chunks();
    // A server that refuses the body answers early and closes: writing then fails (EPIPE), but
    // its answer, not the write error, is what the report needs.
    request.on('error', (error) => {
      finished = true;
      if (!answered) setTimeout(() => (answered ? undefined : reject(error)), 2000);
    });
    const pump = () => {
      while (!finished) {
        const next = chunks.next();
        if (next.done) {
          finished = true;
          request.end();
          return;
        }
        bytes += Buffer.byteLength(next.value);
        if (!request.write(next.value)) {
          request.once('drain', pump);
          return;
        }
      }
    };
    pump();
  });
}
