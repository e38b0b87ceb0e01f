import type { Readable } from 'node:stream';

/** A byte range of a stored file, both ends included (as in HTTP's Range). */
export interface ByteRange {
  start: number;
  end: number;
}

/**
 * Where file content lives: the disk under the data folder or an S3-compatible bucket. Keys are
 * made by the files module (`ws_…/col_…/fil_…`); the store knows nothing of what they mean.
 */
export interface FileStore {
  /**
   * Streams `source` to `key`. The content appears under the key only once complete: a failed
   * or interrupted write (the source errors) leaves nothing behind and rejects with the source's
   * error.
   */
  write(key: string, source: Readable): Promise<void>;
  /** The content, or the range of it; rejects when the key holds nothing. */
  read(key: string, range?: ByteRange): Promise<Readable>;
  /** Removes the content; a key that holds nothing is not an error. */
  remove(key: string): Promise<void>;
  /** Lets go of connections and handles. */
  close(): Promise<void>;
}

/** A key of the files module: ids separated by slashes, nothing a path or URL could misread. */
export const STORAGE_KEY = /^[a-z]+_[0-9a-z]+(\/[a-z]+_[0-9a-z]+)*$/;

export function checkKey(key: string): string {
  if (!STORAGE_KEY.test(key)) throw new Error(`unsafe storage key ${JSON.stringify(key)}`);
  return key;
}
