import type { HttpMethod, Me, Operation, PathsWith, RequestOptions, SuccessBody } from './api-types.js';
import { Events } from './events.js';
import { Files } from './files.js';
import { Transport, type PlainbaseOptions } from './http.js';
import { Records } from './records.js';
import { Submissions } from './submissions.js';

/** One collection's records and files. */
export class Collection<T = Record<string, unknown>> {
  readonly records: Records<T>;
  readonly files: Files;

  constructor(http: Transport, idOrName: string) {
    this.records = new Records<T>(http, idOrName);
    this.files = new Files(http, idOrName);
  }
}

/**
 * A client of one Plainbase service, acting with one API key (or anonymously, for public
 * collections and public submissions):
 *
 * ```js
 * const pb = new Plainbase({ url: 'http://127.0.0.1:8080', key: process.env.PLAINBASE_KEY });
 * const lead = await pb.collection('leads').records.create({ name: 'Ada' });
 * ```
 */
export class Plainbase {
  private readonly http: Transport;
  /** The workspace's events: `events.list()` (the feed) and `events.subscribe()` (live). */
  readonly events: Events;

  constructor(options: PlainbaseOptions) {
    this.http = new Transport(options);
    this.events = new Events(this.http);
  }

  /** A collection by id (`col_…`) or name; `T` types its records' data. Makes no request. */
  collection<T = Record<string, unknown>>(idOrName: string): Collection<T> {
    return new Collection<T>(this.http, idOrName);
  }

  /**
   * Public submissions to a collection (by id, `col_…`), as a visitor of a web page makes them:
   * no key needed, and none is sent. `submit(data, { captchaToken })` answers the new record's summary.
   */
  submissions<T = Record<string, unknown>>(collectionId: string): Submissions<T> {
    return new Submissions<T>(this.http, collectionId);
  }

  /** The calling key: its workspace, granted and effective scopes, collections, expiry. */
  async me(options: { signal?: AbortSignal } = {}): Promise<Me> {
    return this.http.json<Me>('get', '/v1/me', options);
  }

  /**
   * Any route of the API, typed by its OpenAPI document: the path as the document writes it,
   * its parameters, its JSON body. Answers the parsed JSON of a 2xx answer; throws PlainbaseError.
   *
   * ```js
   * await pb.request('post', '/v1/collections', { body: { name: 'leads' } });
   * ```
   */
  async request<M extends HttpMethod, P extends PathsWith<M>>(method: M, path: P, ...[options]: OptionalIfEmpty<RequestOptions<Operation<P, M>>>): Promise<SuccessBody<Operation<P, M>>> {
    const { path: pathParameters, query, body, headers, signal } = (options ?? {}) as {
      path?: Record<string, string | number>;
      query?: Record<string, string | number | boolean | undefined>;
      body?: unknown;
      headers?: Record<string, string>;
      signal?: AbortSignal;
    };
    return this.http.json(method, path as string, { path: pathParameters, query, json: body, headers, signal });
  }
}

type RequiredKeys<T> = { [K in keyof T]-?: Record<never, never> extends Pick<T, K> ? never : K }[keyof T];

/** The options argument may be left out when nothing in it is required. */
type OptionalIfEmpty<T> = [RequiredKeys<T>] extends [never] ? [options?: T] : [options: T];
