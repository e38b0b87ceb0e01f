import { Readable, pipeline } from 'node:stream';
import StreamArray from 'stream-json/streamers/StreamArray.js';
import { AppError } from '../../errors.js';
import type { ImportRow } from './import-row.js';
import { utf8Checked } from './utf8-chunks.js';

/** Elements parsed ahead of the importer before the parser is paused (backpressure). */
const READ_AHEAD = 1024;

/**
 * Reads a JSON array (`[{…}, {…}]`) element by element as it streams, with stream-json: only the
 * element being assembled is in memory, never the whole body. `line` is the element's position
 * (index + 1). A syntax error cannot be stepped over (nothing after it can be trusted), so it
 * stops the import in every mode, naming the element it broke in. An empty or blank body is an
 * empty import.
 */
export async function* parseJsonArray(chunks: AsyncIterable<Buffer>): AsyncGenerator<ImportRow> {
  let sawContent = false;
  const watched = (async function* () {
    for await (const chunk of utf8Checked(chunks)) {
      if (!sawContent && !isBlank(chunk)) sawContent = true;
      yield chunk;
    }
  })();
  const elements = StreamArray.withParser();
  pipeline(Readable.from(watched), elements, () => undefined);

  let item = 0;
  try {
    for await (const element of emitted<{ key: number; value: unknown }>(elements)) {
      item = element.key + 1;
      // An element whose "__proto__" became its prototype is refused with the other rows' checks (accepted-json.ts).
      yield { line: item, data: element.value };
    }
  } catch (error) {
    if (error instanceof AppError) throw error;
    if (!sawContent) return;
    throw syntaxError(item + 1, (error as Error).message);
  }
}

function syntaxError(item: number, reason: string): AppError {
  if (/should be an array/.test(reason)) {
    const message = 'A JSON import must be an array of objects, like [{"name": "Ada"}]; send one object per line as application/x-ndjson instead.';
    return new AppError('INVALID_REQUEST', message, { line: 1, errors: [{ message: 'the body is not a JSON array' }] });
  }
  // stream-json's messages name no position; the element count is what locates the fault.
  return new AppError('INVALID_REQUEST', `Item ${item}: the body is not valid JSON from here on (${reason.replace(/\.$/, '')}).`, {
    line: item,
    errors: [{ message: reason }],
  });
}

function isBlank(chunk: Buffer): boolean {
  for (const byte of chunk) if (byte !== 0x20 && byte !== 0x0a && byte !== 0x0d && byte !== 0x09) return false;
  return true;
}

/**
 * The objects a stream emits, in order. Unlike `for await` over the stream, this also yields
 * every object emitted before an error (async iteration drops what is buffered when the stream
 * fails), so the item count at a syntax error is exact. Pauses the stream while READ_AHEAD
 * objects wait, so a slow importer slows the upload instead of filling memory.
 */
async function* emitted<T>(stream: Readable): AsyncGenerator<T> {
  const queue: T[] = [];
  let failure: Error | null = null;
  let ended = false;
  let wake: (() => void) | null = null;
  const notify = () => {
    wake?.();
    wake = null;
  };
  stream.on('data', (value: T) => {
    queue.push(value);
    if (queue.length >= READ_AHEAD) stream.pause();
    notify();
  });
  stream.once('end', () => {
    ended = true;
    notify();
  });
  stream.once('error', (error: Error) => {
    failure = error;
    notify();
  });
  stream.once('close', () => {
    if (!ended) failure ??= new Error('the body stream closed before its end');
    notify();
  });
  try {
    for (;;) {
      while (queue.length > 0) yield queue.shift()!;
      if (failure) throw failure;
      if (ended) return;
      const waiting = new Promise<void>((resolve) => {
        wake = resolve;
      });
      stream.resume();
      await waiting;
    }
  } finally {
    stream.destroy();
  }
}
