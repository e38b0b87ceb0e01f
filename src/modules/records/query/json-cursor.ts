/**
 * The record queries' cursors (sorted and ranked lists, aggregates): base64url of a small JSON
 * object. Opaque to callers and readable to us; each query checks the object it gets back as the
 * untrusted input it is.
 */
export function encodeJsonCursor(value: object): string {
  return Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');
}

/** The object a cursor holds, or undefined when the text is no base64url of a JSON object. */
export function readJsonCursor(text: string): object | undefined {
  if (!/^[A-Za-z0-9_-]+$/.test(text)) return undefined;
  try {
    const parsed: unknown = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
    return typeof parsed === 'object' && parsed !== null ? parsed : undefined;
  } catch {
    return undefined;
  }
}
