import type { FileInfo, QueryOf } from './api-types.js';
import type { Transport } from './http.js';
import { prepareBody, type BodySource, type OnProgress } from './request-body.js';

export interface UploadOptions {
  /** The file's name. Default: a File's own name; required for anything else. */
  name?: string;
  /** Its media type, served back on download. Default: a Blob's own type, else application/octet-stream. */
  contentType?: string;
  onProgress?: OnProgress;
  signal?: AbortSignal;
}

export interface DownloadOptions {
  /** Only these bytes (inclusive, from 0): answered 206 with `partial: true`. */
  range?: { start: number; end?: number };
  /** Serve as an attachment whatever the type (matters to browsers following the URL). */
  download?: boolean;
  signal?: AbortSignal;
}

/** A download under way: read `body` as a stream, or one of blob(), arrayBuffer(), text(); only once. */
export interface FileDownload {
  body: ReadableStream<Uint8Array>;
  contentType: string;
  /** Bytes in this answer (the range's, for a range), when the server said. */
  size: number | null;
  /** The content's SHA-256, quoted, as the server's ETag. */
  etag: string | null;
  /** True for the answer to a range (206); `contentRange` says which bytes of how many. */
  partial: boolean;
  contentRange: string | null;
  blob(): Promise<Blob>;
  arrayBuffer(): Promise<ArrayBuffer>;
  text(): Promise<string>;
}

export type FileListQuery = QueryOf<'/v1/collections/{col}/files', 'get'>;

/** The files of one collection. */
export class Files {
  constructor(
    private readonly http: Transport,
    private readonly collection: string,
  ) {}

  /**
   * Uploads content as a new file of the collection: a File or Blob, text, bytes, a web stream or
   * a Node.js stream, streamed to the server. Attach it to a record with records.attachFile.
   */
  async upload(source: BodySource, options: UploadOptions = {}): Promise<FileInfo> {
    const name = options.name ?? (typeof File !== 'undefined' && source instanceof File ? source.name : undefined);
    if (!name) throw new TypeError('files.upload: name the file ({ name }) unless you upload a File.');
    const ownType = typeof Blob !== 'undefined' && source instanceof Blob ? source.type : '';
    const prepared = await prepareBody(source, options.onProgress);
    const file = await this.http.json<FileInfo>('post', '/v1/collections/{col}/files', {
      path: { col: this.collection },
      query: { name },
      headers: { 'content-type': options.contentType ?? (ownType || 'application/octet-stream') },
      body: prepared.body,
      signal: options.signal,
    });
    prepared.finish();
    return file;
  }

  /** A file's content, streamed; `range` asks for a part of it. */
  async download(id: string, options: DownloadOptions = {}): Promise<FileDownload> {
    const { range } = options;
    const response = await this.http.send('get', '/v1/collections/{col}/files/{fil}/content', {
      path: { col: this.collection, fil: id },
      query: { download: options.download },
      headers: { range: range ? `bytes=${range.start}-${range.end ?? ''}` : undefined },
      signal: options.signal,
    });
    const length = response.headers.get('content-length');
    return {
      body: response.body ?? new Blob([]).stream(),
      contentType: response.headers.get('content-type') ?? 'application/octet-stream',
      size: length === null ? null : Number(length),
      etag: response.headers.get('etag'),
      partial: response.status === 206,
      contentRange: response.headers.get('content-range'),
      blob: () => response.blob(),
      arrayBuffer: () => response.arrayBuffer(),
      text: () => response.text(),
    };
  }

  /** A file's metadata. */
  async get(id: string, options: { signal?: AbortSignal } = {}): Promise<FileInfo> {
    return this.http.json<FileInfo>('get', '/v1/collections/{col}/files/{fil}', { path: { col: this.collection, fil: id }, signal: options.signal });
  }

  /** One page of the collection's files. */
  async page(options: FileListQuery & { signal?: AbortSignal } = {}): Promise<{ data: FileInfo[]; nextCursor: string | null }> {
    const { signal, ...query } = options;
    return this.http.json('get', '/v1/collections/{col}/files', { path: { col: this.collection }, query, signal });
  }

  /** Deletes the file for good (detaching it from its records). */
  async delete(id: string, options: { signal?: AbortSignal } = {}): Promise<void> {
    await this.http.send('delete', '/v1/collections/{col}/files/{fil}', { path: { col: this.collection, fil: id }, signal: options.signal });
  }
}
