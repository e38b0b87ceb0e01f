import { isUtf8 } from 'node:buffer';
import { rowError, type ImportRow } from './import-row.js';

const NEWLINE = 0x0a;

export interface NdjsonOptions {
  /** A longer line is refused (and skipped) without being held in memory. */
  maxLineBytes: number;
}

/**
 * Reads newline-delimited JSON (one value per line, `\n` or `\r\n`) as it streams. Lines are cut
 * on bytes, before decoding, so a multi-byte character split across chunks stays whole; only the
 * unfinished last line of a chunk is kept between chunks. Blank lines are skipped but counted,
 * so `line` is always the physical line number.
 */
export async function* parseNdjson(chunks: AsyncIterable<Buffer>, options: NdjsonOptions): AsyncGenerator<ImportRow> {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  // Set while the rest of an over-long line is being passed over; it was already reported.
  let skipping = false;
  let line = 0;

  for await (const chunk of chunks) {
    let start = 0;
    for (let end = chunk.indexOf(NEWLINE); end !== -1; end = chunk.indexOf(NEWLINE, start)) {
      line += 1;
      if (skipping) {
        skipping = false;
      } else {
        const bytes = pendingBytes === 0 ? chunk.subarray(start, end) : Buffer.concat([...pending, chunk.subarray(start, end)]);
        const row = readLine(bytes, line, options);
        if (row) yield row;
      }
      pending = [];
      pendingBytes = 0;
      start = end + 1;
    }
    if (start < chunk.length && !skipping) {
      pendingBytes += chunk.length - start;
      if (pendingBytes > options.maxLineBytes) {
        yield tooLong(line + 1, options);
        skipping = true;
        pending = [];
        pendingBytes = 0;
      } else {
        pending.push(chunk.subarray(start));
      }
    }
  }
  if (pendingBytes > 0) {
    const row = readLine(Buffer.concat(pending), line + 1, options);
    if (row) yield row;
  }
}

function readLine(bytes: Buffer, line: number, options: NdjsonOptions): ImportRow | null {
  if (bytes.length > options.maxLineBytes) return tooLong(line, options);
  // Decoded as it is or refused: bytes that are not UTF-8 would otherwise be stored as U+FFFD.
  if (!isUtf8(bytes)) return { line, error: rowError('INVALID_REQUEST', 'The line is not valid UTF-8.') };
  let text = bytes.toString('utf8');
  if (line === 1 && text.charCodeAt(0) === 0xfeff) text = text.slice(1); // a byte order mark
  try {
    return { line, data: JSON.parse(text) };
  } catch (error) {
    // Checked only after a failed parse: a blank line is rare, and trimming every line costs.
    if (text.trim() === '') return null;
    return { line, error: rowError('INVALID_REQUEST', `Not valid JSON: ${(error as Error).message}.`) };
  }
}

const tooLong = (line: number, options: NdjsonOptions): ImportRow => ({
  line,
  error: rowError('PAYLOAD_TOO_LARGE', `The line is longer than ${options.maxLineBytes} bytes, the limit for one record.`, { limitBytes: options.maxLineBytes }),
});
