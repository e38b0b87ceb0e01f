import type { paths } from './generated/openapi.js';

/**
 * Types read off the generated `paths` (src/generated/openapi.ts), so that every request and
 * answer the SDK handles has the shape the server's OpenAPI document declares.
 */
export type HttpMethod = 'get' | 'put' | 'post' | 'delete' | 'patch';

/** The paths that have an operation for the method. */
export type PathsWith<M extends HttpMethod> = {
  [P in keyof paths]: [NonNullable<paths[P][M]>] extends [never] ? never : P;
}[keyof paths];

export type Operation<P extends keyof paths, M extends HttpMethod> = NonNullable<paths[P][M]>;

type ParametersOf<O> = O extends { parameters: infer Parameters } ? Parameters : Record<never, never>;

/** A JSON request body: required when the operation requires one. */
type BodyOf<O> = O extends { requestBody?: never }
  ? { body?: never }
  : O extends { requestBody: { content: { 'application/json': infer Body } } }
    ? { body: Body }
    : O extends { requestBody?: { content: { 'application/json': infer Body } } }
      ? { body?: Body }
      : { body?: never };

/** The path and query parameters of an operation (path required when it has any), and its JSON body. */
export type RequestOptions<O> = Pick<ParametersOf<O>, Extract<keyof ParametersOf<O>, 'path' | 'query'>> &
  BodyOf<O> & {
    headers?: Record<string, string>;
    signal?: AbortSignal;
  };

type ResponsesOf<O> = O extends { responses: infer Responses } ? Responses : never;
type JsonOf<R> = R extends { content: { 'application/json': infer Json } } ? Json : undefined;

/** The JSON body of an operation's successful answer (undefined for 204). */
export type SuccessBody<O> = JsonOf<ResponsesOf<O>[Extract<keyof ResponsesOf<O>, 200 | 201 | 202 | 204>]>;

export type QueryOf<P extends keyof paths, M extends HttpMethod> = NonNullable<ParametersOf<Operation<P, M>> extends { query?: infer Query } ? Query : never>;

/** GET /v1/me: the calling key (or person), its workspace and scopes. */
export type Me = SuccessBody<Operation<'/v1/me', 'get'>>;

/** A record as the API answers it, its data typed by the caller (`collection<T>()`). */
export type PlainbaseRecord<T = Record<string, unknown>> = Omit<SuccessBody<Operation<'/v1/collections/{col}/records/{rec}', 'get'>>, 'data'> & {
  data: T;
  /**
   * The record's ETag as the answer carried it (not a field of the record: not enumerable, not
   * in JSON.stringify). Pass it as `ifMatch` to update only what you read.
   */
  readonly etag?: string;
};

/** One page of a record list. */
export interface RecordPage<T = Record<string, unknown>> {
  data: PlainbaseRecord<T>[];
  /** Pass as `cursor` for the next page; null on the last. */
  nextCursor: string | null;
  /** The number of matching records, when asked for with `count: true`. */
  total?: number;
}

/** A file's metadata. */
export type FileInfo = SuccessBody<Operation<'/v1/collections/{col}/files/{fil}', 'get'>>;

/** What an import did: records created, rows refused. */
export type ImportReport = SuccessBody<Operation<'/v1/collections/{col}/import', 'post'>>;
/** What a change by filter answers. */
export type BulkUpdateResult = SuccessBody<Operation<'/v1/collections/{col}/records/bulk-update', 'post'>>;
export type BulkDeleteResult = SuccessBody<Operation<'/v1/collections/{col}/records/bulk-delete', 'post'>>;

export type RecordListQuery = QueryOf<'/v1/collections/{col}/records', 'get'>;
/** An aggregate's query: filter, groupBy, metrics, tz, sort, limit, cursor (docs/queries.md, Aggregates). */
export type AggregateQuery = QueryOf<'/v1/collections/{col}/aggregate', 'get'>;
/** One page of an aggregate: the groups with their metrics, the next page's cursor, what was skipped. */
export type AggregatePage = SuccessBody<Operation<'/v1/collections/{col}/aggregate', 'get'>>;
export type ExportQuery = QueryOf<'/v1/collections/{col}/export', 'get'>;
export type ImportQuery = QueryOf<'/v1/collections/{col}/import', 'post'>;
