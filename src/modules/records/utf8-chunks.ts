import { AppError } from '../../errors.js';

/**
 * Passes a streamed body through unchanged, refusing it at the first bytes that are not UTF-8:
 * the JSON array and CSV parsers would read them as U+FFFD and store the altered text. Such a
 * fault stops the import in every mode, as broken quoting does: where rows begin after it is not
 * known. (NDJSON checks each line itself, parse-ndjson.ts, and refuses only that line.)
 */
export async function* utf8Checked(chunks: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let offset = 0;
  for await (const chunk of chunks) {
    check(() => decoder.decode(chunk, { stream: true }), offset);
    offset += chunk.length;
    yield chunk;
  }
  // A character cut off by the end of the body.
  check(() => decoder.decode(), offset);
}

function check(decode: () => unknown, offset: number): void {
  try {
    decode();
  } catch {
    throw new AppError('INVALID_REQUEST', `The body is not valid UTF-8 (from byte ${offset} on); send imports as UTF-8.`, {
      errors: [{ message: 'the body is not valid UTF-8' }],
    });
  }
}
