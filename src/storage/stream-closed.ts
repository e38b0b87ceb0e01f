import type { Writable } from 'node:stream';

/**
 * Resolves once `stream` has closed. A pipeline whose source fails can settle while the stream is
 * still opening its file: removed before it exists, the file would be created after and left.
 */
export function closed(stream: Writable): Promise<void> {
  if (stream.closed) return Promise.resolve();
  return new Promise((resolve) => stream.once('close', () => resolve()));
}
