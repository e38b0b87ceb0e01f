/**
 * What an upload or an import may send: text, bytes, a Blob or File, a web ReadableStream, or
 * any async iterable of chunks (a Node.js stream from fs.createReadStream is one).
 */
export type BodySource = string | Uint8Array | ArrayBuffer | Blob | ReadableStream<Uint8Array> | AsyncIterable<Uint8Array | string>;

/** How much of a body has gone out: `bytes` handed to the connection so far, of `total` when known. */
export interface Progress {
  bytes: number;
  total: number | null;
}

export type OnProgress = (progress: Progress) => void;

export interface PreparedBody {
  body: BodyInit;
  /** Call once the answer has come: reports the end to a runtime that could not stream. */
  finish(): void;
}

/**
 * Turns a source into a fetch body. Where fetch can send a stream (Node.js, Deno, Bun, edge
 * runtimes), streams are sent as they are read, and progress counts the bytes handed over.
 * Browsers send a stream body only over HTTP/2 or later, so there a stream is first read into a
 * Blob (progress counts the reading), and a Blob goes out whole (progress: 0, then all).
 */
export async function prepareBody(source: BodySource, onProgress?: OnProgress): Promise<PreparedBody> {
  const done = () => undefined;
  if (isSized(source)) {
    const total = sizeOf(source);
    if (!onProgress) return { body: asBodyInit(source), finish: done };
    onProgress({ bytes: 0, total });
    if (canStreamRequests()) return { body: counted(new Blob([asBlobPart(source)]).stream(), total, onProgress), finish: done };
    return { body: asBodyInit(source), finish: () => onProgress({ bytes: total, total }) };
  }
  const stream = isReadableStream(source) ? source : streamOf(source);
  onProgress?.({ bytes: 0, total: null });
  if (canStreamRequests()) return { body: onProgress ? counted(stream, null, onProgress) : stream, finish: done };
  const blob = await new Response(onProgress ? counted(stream, null, onProgress) : stream).blob();
  return { body: blob, finish: done };
}

type Sized = string | Uint8Array | ArrayBuffer | Blob;

function isSized(source: BodySource): source is Sized {
  return typeof source === 'string' || source instanceof ArrayBuffer || ArrayBuffer.isView(source) || isBlob(source);
}

function isBlob(source: unknown): source is Blob {
  return typeof Blob !== 'undefined' && source instanceof Blob;
}

function isReadableStream(source: unknown): source is ReadableStream<Uint8Array> {
  return typeof source === 'object' && source !== null && typeof (source as ReadableStream).getReader === 'function';
}

function sizeOf(source: Sized): number {
  if (typeof source === 'string') return new TextEncoder().encode(source).byteLength;
  if (isBlob(source)) return source.size;
  return source.byteLength;
}

function asBlobPart(source: Sized): BlobPart {
  return ArrayBuffer.isView(source) ? bytesOf(source) : source;
}

function asBodyInit(source: Sized): BodyInit {
  return ArrayBuffer.isView(source) ? bytesOf(source) : source;
}

/** A view's bytes as a plain Uint8Array (a Node.js Buffer is one, with a type fetch's types do not name). */
function bytesOf(view: ArrayBufferView): Uint8Array<ArrayBuffer> {
  return new Uint8Array(view.buffer as ArrayBuffer, view.byteOffset, view.byteLength);
}

/** An async iterable of chunks as a web stream, read only as fast as fetch sends. */
function streamOf(source: AsyncIterable<Uint8Array | string>): ReadableStream<Uint8Array> {
  const iterator = source[Symbol.asyncIterator]();
  const encoder = new TextEncoder();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { done, value } = await iterator.next();
      if (done) controller.close();
      else controller.enqueue(typeof value === 'string' ? encoder.encode(value) : value);
    },
    async cancel(reason) {
      await iterator.return?.(reason);
    },
  });
}

/** The same stream, reporting the bytes that have passed through it. */
function counted(stream: ReadableStream<Uint8Array>, total: number | null, onProgress: OnProgress): ReadableStream<Uint8Array> {
  const reader = stream.getReader();
  let bytes = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { done, value } = await reader.read();
      if (done) {
        controller.close();
        return;
      }
      bytes += value.byteLength;
      controller.enqueue(value);
      onProgress({ bytes, total });
    },
    cancel: (reason) => reader.cancel(reason),
  });
}

let streamsSupported: boolean | undefined;

/**
 * Whether fetch here sends a ReadableStream body: the feature test for the `duplex` option.
 * Browsers pass that test but refuse such a body over HTTP/1.1 (how Plainbase is usually served),
 * so they are counted out by their user agent.
 */
export function canStreamRequests(): boolean {
  if (streamsSupported !== undefined) return streamsSupported;
  const userAgent = (globalThis as { navigator?: { userAgent?: string } }).navigator?.userAgent ?? '';
  if (userAgent.startsWith('Mozilla/')) return (streamsSupported = false);
  try {
    let duplexRead = false;
    const init = {
      method: 'POST',
      body: new ReadableStream(),
      get duplex() {
        duplexRead = true;
        return 'half';
      },
    };
    const typed = new Request('http://localhost/', init as RequestInit).headers.has('content-type');
    streamsSupported = duplexRead && !typed;
  } catch {
    streamsSupported = false;
  }
  return streamsSupported;
}
