import { createParser } from 'eventsource-parser';

/**
 * The dashboard's one way to the API: JSON calls with the session cookie and the selected
 * workspace's header, raw uploads with progress, and the event stream. Errors come back as
 * ApiError in the API's own words (docs/design.md §2).
 */

const WORKSPACE_HEADER = 'x-baas-workspace';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: unknown,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

let workspaceId: string | null = null;

/** The workspace every later call names; the session provider sets it when one is selected. */
export function setWorkspaceHeader(id: string | null): void {
  workspaceId = id;
}

/** Called when the API says the session is gone, so the app can go back to sign-in. */
let onSignedOut: (() => void) | null = null;
export function onSessionEnded(listener: (() => void) | null): void {
  onSignedOut = listener;
}

function headers(extra: Record<string, string> = {}): Record<string, string> {
  return { accept: 'application/json', ...(workspaceId ? { [WORKSPACE_HEADER]: workspaceId } : {}), ...extra };
}

/** Called after every write the API accepted, so the query cache forgets what may have changed. */
let onWritten: (() => void) | null = null;
export function onApiWrite(listener: (() => void) | null): void {
  onWritten = listener;
}

/**
 * JSON call to the API: sends the session cookie and the current workspace header
 * (x-baas-workspace). `signal` cancels it (a query's, when its page is left).
 */
export async function api<T = unknown>(method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE', path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
  const response = await send(path, {
    method,
    // A JSON content type also satisfies the API's CSRF rule for cookie-signed writes.
    headers: headers(body === undefined ? {} : { 'content-type': 'application/json' }),
    body: body === undefined ? undefined : JSON.stringify(body),
    signal,
  });
  return readAnswer<T>(response.status, response.headers.get('content-type'), await response.text());
}

/**
 * A JSON call on one versioned thing (a record): sends `If-Match` when given and answers the body
 * with the answer's ETag, so an edit can be saved only over the version it started from.
 */
export async function apiVersioned<T = unknown>(
  method: 'GET' | 'PUT' | 'PATCH',
  path: string,
  options: { body?: unknown; ifMatch?: string | null } = {},
): Promise<{ body: T; etag: string | null }> {
  const extra: Record<string, string> = options.body === undefined ? {} : { 'content-type': 'application/json' };
  if (options.ifMatch) extra['if-match'] = options.ifMatch;
  const response = await send(path, { method, headers: headers(extra), body: options.body === undefined ? undefined : JSON.stringify(options.body) });
  const body = readAnswer<T>(response.status, response.headers.get('content-type'), await response.text());
  return { body, etag: response.headers.get('etag') };
}

/** A GET whose answer is read as it arrives (downloads): the same cookie and header as api(), errors as ApiError. */
export async function fetchFromApi(path: string): Promise<Response> {
  const response = await send(path, { method: 'GET', headers: headers({ accept: '*/*' }) });
  if (!response.ok) readAnswer(response.status, response.headers.get('content-type'), await response.text());
  return response;
}

/** One event of the API's event stream (GET /v1/events/stream). */
export interface StreamedEvent {
  id: string;
  type: string;
  /** The event message (docs/events.md). */
  message: { id: string; type: string; collectionId: string; data: Record<string, unknown> };
}

/**
 * Reads an event stream until it ends or `signal` aborts, calling `onEvent` for each event. A
 * fetch, not EventSource: that cannot send the workspace header. Resolves when the server ends
 * the stream; errors come back as ApiError.
 */
export async function readEventStream(path: string, lastEventId: string | null, onEvent: (event: StreamedEvent) => void, signal: AbortSignal): Promise<void> {
  const response = await send(path, {
    method: 'GET',
    headers: headers({ accept: 'text/event-stream', ...(lastEventId ? { 'last-event-id': lastEventId } : {}) }),
    signal,
  });
  if (!response.ok || !response.body) {
    readAnswer(response.status, response.headers.get('content-type'), await response.text());
    return;
  }
  const parser = createParser({
    onEvent: (event) => {
      if (event.id && event.event) onEvent({ id: event.id, type: event.event, message: JSON.parse(event.data) as StreamedEvent['message'] });
    },
  });
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    parser.feed(value);
  }
}

async function send(path: string, init: RequestInit): Promise<Response> {
  let response: Response;
  try {
    response = await fetch(path, { ...init, credentials: 'same-origin' });
  } catch (error) {
    if (init.signal?.aborted) throw error;
    throw new ApiError(0, 'NETWORK', 'The service cannot be reached. Check your connection and try again.', null);
  }
  // A session that ended (expired, signed out elsewhere) sends the app back to sign-in; a wrong
  // password on the sign-in or invite form is not that.
  if (response.status === 401 && !/^\/v1\/(auth|invites)\//.test(path)) onSignedOut?.();
  if (response.ok && init.method !== 'GET') onWritten?.();
  return response;
}

/** Raw-body upload (import, files) with progress 0..1, via XMLHttpRequest. */
export function upload<T = unknown>(path: string, body: Blob | File, contentType: string, onProgress?: (fraction: number) => void): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const request = new XMLHttpRequest();
    request.open('POST', path);
    request.withCredentials = true;
    for (const [name, value] of Object.entries(headers({ 'content-type': contentType }))) request.setRequestHeader(name, value);
    request.upload.onprogress = (event) => {
      if (event.lengthComputable && onProgress) onProgress(event.total === 0 ? 1 : event.loaded / event.total);
    };
    request.onerror = () => reject(new ApiError(0, 'NETWORK', 'The upload was interrupted: the service cannot be reached.', null));
    request.onload = () => {
      onProgress?.(1);
      if (request.status >= 200 && request.status < 300) onWritten?.();
      try {
        resolve(readAnswer<T>(request.status, request.getResponseHeader('content-type'), request.responseText));
      } catch (error) {
        reject(error);
      }
    };
    request.send(body);
  });
}

function readAnswer<T>(status: number, contentType: string | null, text: string): T {
  const isJson = /json/i.test(contentType ?? '');
  const parsed: unknown = isJson && text !== '' ? JSON.parse(text) : text === '' ? undefined : text;
  if (status >= 200 && status < 300) return parsed as T;
  const error = (parsed as { error?: { code?: string; message?: string; details?: unknown } } | undefined)?.error;
  throw new ApiError(status, error?.code ?? 'HTTP_' + status, error?.message ?? `The service answered ${status}.`, error?.details ?? null);
}

/** Words for any error, for people: the API's message plus named fields. */
export function errorText(error: unknown): string {
  if (error instanceof ApiError) {
    const fields = fieldErrors(error);
    const extra = fields.filter((entry) => entry.message && !error.message.includes(entry.field)).map((entry) => `${entry.field} ${entry.message}.`);
    // The service accepts changes only from its own address (PLAINBASE_PUBLIC_URL), which its message names; say where this page is.
    if (error.status === 403 && /another site/.test(error.message)) {
      extra.push(`This page is at ${window.location.origin}.`);
    }
    return [error.message, ...extra].join(' ');
  }
  if (error instanceof Error) return error.message;
  return String(error);
}

/** The API's per-field errors (`details.errors`, or the one `details.field`), with the body./querystring. prefix dropped. */
export function fieldErrors(error: unknown): { field: string; message: string }[] {
  if (!(error instanceof ApiError) || typeof error.details !== 'object' || error.details === null) return [];
  const details = error.details as { field?: unknown; errors?: unknown };
  const list = Array.isArray(details.errors) ? details.errors : typeof details.field === 'string' ? [{ field: details.field, message: '' }] : [];
  return list
    .filter((entry): entry is { field: string; message?: string } => typeof entry === 'object' && entry !== null && typeof (entry as { field?: unknown }).field === 'string')
    .map((entry) => ({ field: entry.field.replace(/^(body|querystring|params)\./, ''), message: entry.message ?? '' }));
}

/** The error text for one field of a form, or undefined when the error is about something else. */
export function fieldError(error: unknown, field: string): string | undefined {
  const match = fieldErrors(error).find((entry) => entry.field === field);
  if (!match) return undefined;
  return match.message || (error as ApiError).message;
}

/**
 * The error texts for a field and everything inside it (`settings.submissions.origins` covers
 * `…origins.2`), each with its field named, for a form control that edits a whole list or object.
 */
export function fieldErrorsWithin(error: unknown, field: string): string[] {
  return fieldErrors(error)
    .filter((entry) => entry.field === field || entry.field.startsWith(`${field}.`))
    .map((entry) => (entry.message ? `${entry.field} ${entry.message}.` : (error as ApiError).message));
}

/** One page of a cursor-paged list (docs/design.md §2); `total` only from the record list's count=true (§5). */
export interface Page<T> {
  data: T[];
  nextCursor: string | null;
  total?: number;
}

/** `path` asking for the page after `cursor` (the first page when there is none). */
export function withCursor(path: string, cursor: string | null | undefined): string {
  if (!cursor) return path;
  return `${path}${path.includes('?') ? '&' : '?'}cursor=${encodeURIComponent(cursor)}`;
}

/**
 * Every item of a cursor-paged list, for pickers and for naming things (collections, keys): such
 * lists are short, and a picker that silently missed the second page would mislead.
 */
export async function loadAll<T>(path: string, signal?: AbortSignal): Promise<T[]> {
  const items: T[] = [];
  const first = `${path}${path.includes('?') ? '&' : '?'}limit=1000`;
  let cursor: string | null = null;
  do {
    const page: Page<T> = await api<Page<T>>('GET', withCursor(first, cursor), undefined, signal);
    items.push(...page.data);
    cursor = page.nextCursor;
  } while (cursor);
  return items;
}
