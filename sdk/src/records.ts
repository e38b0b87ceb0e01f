import type { AggregatePage, AggregateQuery, BulkDeleteResult, BulkUpdateResult, ExportQuery, ImportQuery, ImportReport, PlainbaseRecord, RecordListQuery, RecordPage } from './api-types.js';
import type { Transport } from './http.js';
import { prepareBody, type BodySource, type OnProgress } from './request-body.js';

export interface ListOptions extends Omit<RecordListQuery, 'cursor' | 'count'> {
  /** Records per page (1–1000, default 50); iterating goes on across pages until the end. */
  limit?: number;
  signal?: AbortSignal;
}

export interface PageOptions extends RecordListQuery {
  signal?: AbortSignal;
}

export interface WriteOptions {
  /** Send the ETag you read (`record.etag`): a record changed since answers 412 PRECONDITION_FAILED. */
  ifMatch?: string;
  /** Sent as `Idempotency-Key`: a repeat within 24 h answers the first answer again and creates nothing (the server honours it on create). */
  idempotencyKey?: string;
  signal?: AbortSignal;
}

export type ImportFormat = 'ndjson' | 'json' | 'csv';

export interface ImportOptions extends ImportQuery {
  /** The body's format. Default: from a File's name or a Blob's type, else NDJSON. */
  format?: ImportFormat;
  /** Called as the body goes out (see Progress). */
  onProgress?: OnProgress;
  signal?: AbortSignal;
}

export interface ExportOptions extends ExportQuery {
  signal?: AbortSignal;
}

export interface BulkOptions {
  /** Answer the counts and change nothing. */
  dryRun?: boolean;
  signal?: AbortSignal;
}

/** A JSON Merge Patch of a record's data: fields to set, `null` to remove one. */
export type MergePatch<T> = { [K in keyof T]?: T[K] | null } & Record<string, unknown>;

const IMPORT_TYPES: Record<ImportFormat, string> = { ndjson: 'application/x-ndjson', json: 'application/json', csv: 'text/csv' };

/** The records of one collection (named by id or by name). */
export class Records<T = Record<string, unknown>> {
  constructor(
    private readonly http: Transport,
    private readonly collection: string,
  ) {}

  /**
   * Every matching record, page after page, as an async iterator: `for await (const r of
   * records.list({ filter, sort }))`. Nothing is fetched until iterating starts; breaking out
   * stops it. `.pages()` iterates whole pages instead.
   */
  list(options: ListOptions = {}): RecordList<T> {
    return new RecordList((cursor) => this.page({ ...options, cursor }));
  }

  /** One page of records; pass the answer's `nextCursor` as `cursor` for the next. */
  async page(options: PageOptions = {}): Promise<RecordPage<T>> {
    const { signal, ...query } = options;
    return this.http.json<RecordPage<T>>('get', '/v1/collections/{col}/records', { path: { col: this.collection }, query, signal });
  }

  /**
   * One page of an aggregate of the records: `records.aggregate({ groupBy: 'data.plan,createdAt:day',
   * metrics: 'count,sum:data.amount', tz: 'Europe/Berlin' })`. Pass the answer's `nextCursor` as
   * `cursor` (with the same other options) for the next page.
   */
  async aggregate(options: AggregateQuery & { signal?: AbortSignal } = {}): Promise<AggregatePage> {
    const { signal, ...query } = options;
    return this.http.json<AggregatePage>('get', '/v1/collections/{col}/aggregate', { path: { col: this.collection }, query, signal });
  }

  async create(data: T, options: Omit<WriteOptions, 'ifMatch'> = {}): Promise<PlainbaseRecord<T>> {
    return this.write('post', '/v1/collections/{col}/records', { data }, options);
  }

  async get(id: string, options: { trashed?: boolean; signal?: AbortSignal } = {}): Promise<PlainbaseRecord<T>> {
    const response = await this.http.send('get', '/v1/collections/{col}/records/{rec}', {
      path: { col: this.collection, rec: id },
      query: { trashed: options.trashed },
      signal: options.signal,
    });
    return withEtag(await response.json(), response);
  }

  /** Merges `patch` into the record's data (JSON Merge Patch: `null` removes a field). */
  async update(id: string, patch: MergePatch<T>, options: WriteOptions = {}): Promise<PlainbaseRecord<T>> {
    return this.write('patch', '/v1/collections/{col}/records/{rec}', { data: patch }, options, id);
  }

  /** Replaces the record's data with `data`. */
  async replace(id: string, data: T, options: WriteOptions = {}): Promise<PlainbaseRecord<T>> {
    return this.write('put', '/v1/collections/{col}/records/{rec}', { data }, options, id);
  }

  /** Moves the record to the trash (emits record.deleted); `restore` brings it back. */
  async trash(id: string, options: Omit<WriteOptions, 'idempotencyKey'> = {}): Promise<PlainbaseRecord<T>> {
    return this.write('delete', '/v1/collections/{col}/records/{rec}', undefined, options, id);
  }

  async restore(id: string, options: { signal?: AbortSignal } = {}): Promise<PlainbaseRecord<T>> {
    return this.write('post', '/v1/collections/{col}/records/{rec}/restore', undefined, options, id);
  }

  /** Attaches an uploaded file (files.upload) to the record. */
  async attachFile(id: string, fileId: string, options: { signal?: AbortSignal } = {}): Promise<PlainbaseRecord<T>> {
    return this.write('post', '/v1/collections/{col}/records/{rec}/files', { fileId }, options, id);
  }

  async detachFile(id: string, fileId: string, options: { signal?: AbortSignal } = {}): Promise<PlainbaseRecord<T>> {
    const response = await this.http.send('delete', '/v1/collections/{col}/records/{rec}/files/{fil}', {
      path: { col: this.collection, rec: id, fil: fileId },
      signal: options.signal,
    });
    return withEtag(await response.json(), response);
  }

  /**
   * Merges `patch` into every live record `filter` matches (the list's filter syntax; `"*"` for
   * every record), in one transaction: each changed record gets a revision, a version and a
   * record.updated event. A record that would break the active schema changes nothing (422).
   */
  async bulkUpdate(filter: string, patch: MergePatch<T>, options: BulkOptions = {}): Promise<BulkUpdateResult> {
    const { signal, dryRun } = options;
    return this.http.json<BulkUpdateResult>('post', '/v1/collections/{col}/records/bulk-update', { path: { col: this.collection }, json: { filter, patch, ...(dryRun === undefined ? {} : { dryRun }) }, signal });
  }

  /** Moves every live record `filter` matches to the trash, in one transaction (record.deleted each). */
  async bulkTrash(filter: string, options: BulkOptions = {}): Promise<BulkDeleteResult> {
    const { signal, dryRun } = options;
    return this.http.json<BulkDeleteResult>('post', '/v1/collections/{col}/records/bulk-delete', { path: { col: this.collection }, json: { filter, ...(dryRun === undefined ? {} : { dryRun }) }, signal });
  }

  /**
   * Imports records from NDJSON, a JSON array or CSV: a string, bytes, a Blob or File, a web
   * stream or a Node.js stream, sent as it is read. `mode: 'partial'` keeps the good rows and
   * reports the refused ones; the default refuses the whole import at its first bad row.
   */
  async import(source: BodySource, options: ImportOptions = {}): Promise<ImportReport> {
    const { format = formatOf(source), onProgress, signal, ...query } = options;
    const prepared = await prepareBody(source, onProgress);
    const report = await this.http.json<ImportReport>('post', '/v1/collections/{col}/import', {
      path: { col: this.collection },
      query,
      headers: { 'content-type': IMPORT_TYPES[format] },
      body: prepared.body,
      signal,
    });
    prepared.finish();
    return report;
  }

  /**
   * The collection's records (not the trash) as NDJSON or CSV, as a web ReadableStream of bytes
   * that the server writes as it reads: a consistent snapshot, oldest first or by `sort`. Errors (a missing
   * scope, a bad filter) are thrown before any byte.
   */
  async export(options: ExportOptions = {}): Promise<ReadableStream<Uint8Array>> {
    const { signal, ...query } = options;
    const response = await this.http.send('get', '/v1/collections/{col}/export', { path: { col: this.collection }, query, signal });
    return response.body ?? new Blob([]).stream();
  }

  private async write(method: string, template: string, json: unknown, options: WriteOptions, id?: string): Promise<PlainbaseRecord<T>> {
    const response = await this.http.send(method, template, {
      path: { col: this.collection, ...(id === undefined ? {} : { rec: id }) },
      json,
      headers: { 'if-match': options.ifMatch, 'idempotency-key': options.idempotencyKey },
      signal: options.signal,
    });
    return withEtag(await response.json(), response);
  }
}

/** The records of a list, page by page, fetched as they are iterated. */
export class RecordList<T> implements AsyncIterable<PlainbaseRecord<T>> {
  constructor(private readonly fetchPage: (cursor: string | undefined) => Promise<RecordPage<T>>) {}

  async *pages(): AsyncGenerator<RecordPage<T>, void, undefined> {
    let cursor: string | undefined;
    do {
      const page = await this.fetchPage(cursor);
      yield page;
      cursor = page.nextCursor ?? undefined;
    } while (cursor !== undefined);
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<PlainbaseRecord<T>, void, undefined> {
    for await (const page of this.pages()) yield* page.data;
  }

  /** Every record in one array: for lists known to be small. */
  async toArray(): Promise<PlainbaseRecord<T>[]> {
    const records: PlainbaseRecord<T>[] = [];
    for await (const record of this) records.push(record);
    return records;
  }
}

/** The answer's ETag on the record, where code that needs it finds it and JSON does not. */
function withEtag<T>(record: PlainbaseRecord<T>, response: Response): PlainbaseRecord<T> {
  const etag = response.headers.get('etag');
  if (etag !== null) Object.defineProperty(record, 'etag', { value: etag, enumerable: false });
  return record;
}

function formatOf(source: BodySource): ImportFormat {
  const name = typeof File !== 'undefined' && source instanceof File ? source.name.toLowerCase() : '';
  const type = typeof Blob !== 'undefined' && source instanceof Blob ? source.type.split(';')[0]!.trim().toLowerCase() : '';
  if (type === 'text/csv' || name.endsWith('.csv')) return 'csv';
  if (type === 'application/json' || name.endsWith('.json')) return 'json';
  return 'ndjson';
}
