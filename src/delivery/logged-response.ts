import { toStorableText } from '../storable-text.js';

/**
 * What the delivery log keeps of a receiver's answer, as text both engines store: the answer's
 * bytes are the receiver's, anything at all (compressed, an image, NUL bytes, not UTF-8), and a
 * PostgreSQL text column refuses NUL. A log that cannot be written would leave the delivery to be
 * sent again and again, so nothing a receiver sends may make its row unstorable.
 */

/** What is known of the body besides its first bytes. */
export interface BodyFacts {
  /** The body may go on past the bytes read: read up to the log's limit, or broken off. */
  cut: boolean;
  contentType: string | undefined;
  contentEncoding: string | undefined;
}

/**
 * The body as the log keeps it: text (UTF-8, with NUL and bytes that are not UTF-8 replaced by
 * U+FFFD), or, for a body that is not text, one line that says what it was, e.g.
 * `[binary body: 1234 bytes, image/gif]`. Never decompressed: a body with a content-encoding is
 * summarised as it arrived.
 */
export function loggedBody(bytes: Uint8Array, facts: BodyFacts): string {
  if (bytes.length === 0) return '';
  const encoded = facts.contentEncoding !== undefined && facts.contentEncoding.trim().toLowerCase() !== 'identity';
  if (encoded || isBinaryType(facts.contentType)) return binarySummary(bytes.length, facts);
  // `stream` leaves out a character cut in two at the end of what was read, rather than marking
  // it as an error; the BOM, if any, is kept as it arrived.
  const text = new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes, { stream: facts.cut });
  if (looksBinary(text)) return binarySummary(bytes.length, facts);
  return toStorableText(text);
}

/** Header names and values as text both engines store (they are kept as JSON text). */
export function loggedHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  // Names are the receiver's: a null-prototype object keeps each one as a plain entry.
  const logged: Record<string, string> = Object.create(null);
  for (const [name, value] of Object.entries(headers)) {
    logged[toStorableText(name)] = toStorableText(Array.isArray(value) ? value.join(', ') : String(value ?? ''));
  }
  return logged;
}

/** Longest content type or encoding quoted in a summary: they are the receiver's text. */
const QUOTED_LIMIT = 100;

function binarySummary(size: number, facts: BodyFacts): string {
  const parts = [facts.cut ? `at least ${size} bytes` : `${size} bytes`];
  if (facts.contentType) parts.push(quoted(facts.contentType));
  if (facts.contentEncoding) parts.push(`content-encoding ${quoted(facts.contentEncoding)}`);
  return `[binary body: ${parts.join(', ')}]`;
}

function quoted(value: string): string {
  return toStorableText(value.trim().slice(0, QUOTED_LIMIT));
}

/** Media types whose bodies are never text, whatever their bytes happen to look like. */
const BINARY_TOP_LEVEL = new Set(['image', 'audio', 'video', 'font', 'model']);
const BINARY_APPLICATION = new Set([
  'octet-stream', 'pdf', 'zip', 'gzip', 'x-gzip', 'zstd', 'x-bzip2', 'x-xz', 'x-7z-compressed', 'x-tar',
  'wasm', 'protobuf', 'x-protobuf', 'msgpack', 'x-msgpack', 'cbor',
]);

function isBinaryType(contentType: string | undefined): boolean {
  if (!contentType) return false;
  const [top = '', sub = ''] = contentType.split(';', 1)[0]!.trim().toLowerCase().split('/');
  return BINARY_TOP_LEVEL.has(top) || (top === 'application' && BINARY_APPLICATION.has(sub));
}

/**
 * Bytes that are not text: more than 30% of the characters are control characters (tab, line
 * breaks and form feed aside), NUL included, or bytes that were not UTF-8 (Perl's rule for a
 * binary file). Images and compressed data are far above it; text with a few such characters is
 * kept, with them replaced.
 */
const NOT_TEXT = /[\u0000-\u0008\u000B\u000E-\u001F\u007F\uFFFD]/g;

function looksBinary(text: string): boolean {
  const odd = text.match(NOT_TEXT)?.length ?? 0;
  return odd * 10 > text.length * 3;
}
