import { errorFromResponse, PlainbaseError } from './errors.js';

export interface PlainbaseOptions {
  /** Where the service answers, like `http://127.0.0.1:8080` (a path prefix behind a proxy is kept). */
  url: string;
  /** An API key (`pb_live_…` or `pb_test_…`), sent as `Authorization: Bearer …`. Leave it out to read public collections anonymously. */
  key?: string;
  /**
   * A workspace id (`ws_…`), sent as the `x-baas-workspace` header. Only anonymous reads of a
   * public collection by its name need it (a key carries its workspace).
   */
  workspace?: string;
  /** A fetch to use instead of the global one (a test double, a proxy-aware fetch). */
  fetch?: typeof fetch;
  /** Headers added to every request, like a User-Agent. */
  headers?: Record<string, string>;
}

/** The headers that say who is calling: none of them goes with an anonymous request. */
const CREDENTIAL_HEADERS = new Set(['authorization', 'x-baas-workspace', 'cookie']);

export type QueryValue = string | number | boolean | undefined;

export interface SendOptions {
  path?: Record<string, string | number>;
  query?: Record<string, QueryValue>;
  headers?: Record<string, string | undefined>;
  /** A value sent as JSON. */
  json?: unknown;
  /** A body sent as it is; a stream needs `duplex: 'half'` (set here). */
  body?: BodyInit;
  signal?: AbortSignal;
  /**
   * Sends no credential at all: no key, no workspace header, and no cookie even to the page's own
   * origin (a public submission must be one whoever's browser sends it).
   */
  anonymous?: boolean;
}

/**
 * Sends requests to one Plainbase service: joins the URL, adds the credential, and turns every
 * answer that is not 2xx, and every failure to get one, into a PlainbaseError.
 */
export class Transport {
  private readonly base: string;
  private readonly fetch: typeof fetch;
  private readonly headers: Record<string, string>;

  constructor(options: PlainbaseOptions) {
    if (typeof options?.url !== 'string' || !/^https?:\/\//i.test(options.url)) {
      throw new TypeError('new Plainbase({ url }): url must be the http:// or https:// address of the service.');
    }
    this.base = options.url.replace(/\/+$/, '');
    const fetchImpl = options.fetch ?? globalThis.fetch;
    if (typeof fetchImpl !== 'function') throw new TypeError('new Plainbase(): this runtime has no fetch; pass one as the fetch option.');
    // Called bare, a browser's fetch would run with the wrong `this`.
    this.fetch = (input, init) => fetchImpl(input, init);
    this.headers = { ...options.headers };
    // A key read from a file or an environment variable often ends in a newline.
    if (options.key !== undefined) this.headers.authorization = `Bearer ${options.key.trim()}`;
    if (options.workspace !== undefined) this.headers['x-baas-workspace'] = options.workspace;
  }

  /** The answer to a request, when it is 2xx; a PlainbaseError otherwise. */
  async send(method: string, template: string, options: SendOptions = {}): Promise<Response> {
    const url = new URL(this.base + fillPath(template, options.path ?? {}));
    for (const [name, value] of Object.entries(options.query ?? {})) {
      if (value !== undefined) url.searchParams.set(name, String(value));
    }
    const headers: Record<string, string> = { ...this.headers };
    if (options.anonymous) {
      for (const name of Object.keys(headers)) if (CREDENTIAL_HEADERS.has(name.toLowerCase())) delete headers[name];
    }
    for (const [name, value] of Object.entries(options.headers ?? {})) {
      if (value !== undefined) headers[name.toLowerCase()] = value;
    }
    let body = options.body;
    if (options.json !== undefined) {
      body = JSON.stringify(options.json);
      headers['content-type'] = 'application/json';
    }
    const init: RequestInit & { duplex?: 'half' } = { method: method.toUpperCase(), headers, body, signal: options.signal };
    if (options.anonymous) init.credentials = 'omit';
    // Fetch sends a stream only when told that the answer may come before the body is all out.
    if (isStream(body)) init.duplex = 'half';

    let response: Response;
    try {
      response = await this.fetch(url, init);
    } catch (error) {
      // The caller's own abort is theirs to handle, not a failure of the service.
      if (options.signal?.aborted) throw error;
      throw new PlainbaseError({
        code: 'NETWORK_ERROR',
        status: 0,
        message: `No answer from ${url.origin}: ${(error as Error)?.message ?? String(error)}`,
        cause: error,
      });
    }
    if (!response.ok) throw await errorFromResponse(response);
    return response;
  }

  /** The parsed JSON of a 2xx answer; undefined when it has no body (204). */
  async json<T>(method: string, template: string, options: SendOptions = {}): Promise<T> {
    const response = await this.send(method, template, options);
    if (response.status === 204) return undefined as T;
    const text = await response.text();
    return (text === '' ? undefined : JSON.parse(text)) as T;
  }
}

/** `/v1/collections/{col}` with `{col: 'leads'}`: each value percent-encoded as one segment. */
function fillPath(template: string, values: Record<string, string | number>): string {
  return template.replace(/\{(\w+)\}/g, (_, name: string) => {
    if (!Object.hasOwn(values, name)) throw new TypeError(`${template}: the path parameter ${name} is missing.`);
    return encodeURIComponent(String(values[name]));
  });
}

function isStream(body: unknown): body is ReadableStream {
  return typeof body === 'object' && body !== null && typeof (body as ReadableStream).getReader === 'function';
}
