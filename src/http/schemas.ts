import { Type, type TSchema, type TUnsafe } from 'typebox';
import { ROLES } from '../abilities.js';
import { ERROR_STATUS, type ErrorCode } from '../errors.js';

/**
 * Schemas shared by several routes, and the pieces of the OpenAPI document they share (response
 * headers, error examples). Examples use made-up ids and times; they are what a caller sees.
 */

/**
 * A string that takes only these values, as one `enum` (a dropdown on /docs, a union in the SDK's
 * types), rather than TypeBox's union of constants.
 */
export const StringEnum = <T extends string>(values: readonly T[], options: { description?: string; default?: T } = {}): TUnsafe<T> =>
  Type.Unsafe<T>({ type: 'string', enum: [...values], ...options });

/**
 * Any JSON object, whatever its keys. Type.Record(Type.String(), …) says the same with the key
 * pattern ^.*$, and the response serializer drops every key that pattern does not match: a key
 * with a line break in it would vanish from the answer.
 */
export const AnyObject = (options: { description?: string; examples?: Record<string, unknown>[] } = {}) => Type.Unsafe<Record<string, unknown>>({ type: 'object', additionalProperties: true, ...options });

const ERROR_CODES = Object.keys(ERROR_STATUS) as ErrorCode[];

export const ErrorBody = Type.Object(
  {
    error: Type.Object({
      code: StringEnum(ERROR_CODES, {
        description: `A stable code; its HTTP status: ${ERROR_CODES.map((code) => `${code} ${ERROR_STATUS[code]}`).join(', ')}.`,
      }),
      message: Type.String({ description: 'A sentence for people; may change.' }),
      requestId: Type.String({ description: 'The request id (req_…), also in the x-request-id header: the server logs carry it.' }),
      details: Type.Optional(AnyObject({ description: 'Facts a program can act on, like the field that failed (`field`) or the limit (`limit`).' })),
    }),
  },
  { $id: 'Error', title: 'Error', description: 'Every error answer, whatever the status.' },
);

type Example = { summary: string; value: unknown };
const errorExample = (code: ErrorCode, summary: string, message: string, details?: Record<string, unknown>): Example => ({
  summary,
  value: { error: { code, message, requestId: 'req_01jbx3m9k6t2v8w4y7z0a5c1d3', ...(details ? { details } : {}) } },
});

/** Examples of the 4XX answers every operation shares, for the document. */
export const ERROR_EXAMPLES: Record<string, Example> = {
  INVALID_REQUEST: errorExample('INVALID_REQUEST', 'A field is missing or not valid (400)', 'body.name is required.', { field: 'body.name', errors: [{ field: 'body.name', message: 'is required' }] }),
  UNAUTHENTICATED: errorExample('UNAUTHENTICATED', 'No credential, or the session ended (401)', 'Sign in or send an API key.'),
  MISSING_SCOPE: errorExample('MISSING_SCOPE', 'The key lacks a scope (403)', 'This key does not have the records:create scope.', { scope: 'records:create' }),
  NOT_FOUND: errorExample('NOT_FOUND', 'Nothing of that name or id in this workspace (404)', 'No such collection in this workspace.'),
  RATE_LIMITED: errorExample('RATE_LIMITED', 'Too many requests (429)', 'Too many requests; try again later.', { retryAfterSeconds: 1 }),
};

/** Examples of the 5XX answers. */
export const SERVER_ERROR_EXAMPLES: Record<string, Example> = {
  INTERNAL: errorExample('INTERNAL', 'Something failed on the server (500)', 'Something went wrong on our side; the request id helps us find it.'),
  UNAVAILABLE: errorExample('UNAVAILABLE', 'The database cannot be reached (503)', 'The database cannot be reached right now; try again shortly.'),
};

/** Response headers of the document, declared once (a response schema's `headers`). */
export const ResponseHeaders = {
  etag: Type.String({ description: 'The record\'s revision, quoted ("7"): send it back as If-Match to change only that revision.', examples: ['"7"'] }),
  location: Type.String({ description: 'The address of what was created.', examples: ['/v1/collections/col_01jbx3m9k6t2v8w4y7z0a5c1d3/files/fil_01jbx3p2q8r4s6t0v2w4y6z8a0'] }),
  setSession: Type.String({
    description: 'The session cookie: HttpOnly, SameSite=Lax, Secure unless PLAINBASE_ENV=development; named __Host-plainbase_session (always Secure) when PLAINBASE_PUBLIC_URL is https://. A browser sends it with later calls.',
    examples: ['plainbase_session=…; Path=/; Expires=Thu, 19 Nov 2026 10:00:00 GMT; HttpOnly; Secure; SameSite=Lax'],
  }),
  clearSession: Type.String({ description: 'Clears the session cookie.', examples: ['plainbase_session=; Path=/; Expires=Thu, 01 Jan 1970 00:00:00 GMT; HttpOnly; Secure; SameSite=Lax'] }),
  contentRange: Type.String({ description: 'Which bytes of the file this is, of how many: bytes 0-99/5120.', examples: ['bytes 0-99/5120'] }),
  unsatisfiedRange: Type.String({ description: 'The file\'s size, for a range that cannot be served: bytes */5120.', examples: ['bytes */5120'] }),
  contentDisposition: Type.String({ description: 'inline, or attachment (save, do not show) with the file name.', examples: ['attachment; filename="leads.ndjson"'] }),
  lastModified: Type.String({ description: 'When the content was stored (an HTTP date).', examples: ['Tue, 05 Nov 2026 10:00:00 GMT'] }),
  acceptRanges: Type.String({ description: 'bytes: a Range header may ask for part of the content.', examples: ['bytes'] }),
};

/** Retry-After of a 429 answer, as an OpenAPI header object (components/headers/RetryAfter). */
export const RETRY_AFTER = {
  description: 'Seconds to wait before trying again.',
  schema: { type: 'integer', minimum: 1 },
  example: 1,
};

/** A response schema with the headers the answer carries, for the document; the body is serialised as before. */
export const withHeaders = <T extends TSchema>(schema: T, headers: Record<string, TSchema>): T => ({ ...schema, headers }) as T;

export const idOf = (prefix: string) => Type.String({ pattern: `^${prefix}_[0-9a-z]{26}$`, description: `An id starting with ${prefix}_` });

export const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601 in UTC with milliseconds.' });

export const ASSIGNABLE_ROLES = ['admin', 'editor', 'viewer'] as const;
export const AssignableRole = StringEnum(ASSIGNABLE_ROLES, { description: 'admin, editor or viewer: the roles that can be given (there is one owner).' });
export const RoleName = StringEnum(ROLES, { description: 'owner, admin, editor or viewer.' });

export const Email = Type.String({ format: 'email', maxLength: 254 });
export const Password = Type.String({ minLength: 1, maxLength: 1024 });
// At least one visible character and no control characters: a blank name shows as nothing, and
// PostgreSQL text cannot hold U+0000 at all (it would fail as a 500 instead of a 400).
export const DisplayName = Type.String({ minLength: 1, maxLength: 200, pattern: '^(?=.*\\S)[^\\u0000-\\u001F\\u007F]+$' });

/** Made-up values the examples of the document share: an id of each kind, and two times. */
export const exampleId = (prefix: string) => `${prefix}_01jbx3m9k6t2v8w4y7z0a5c1d3`;
export const EXAMPLE_TIME = '2026-11-05T10:00:00.000Z';
export const EXAMPLE_LATER = '2026-11-05T10:05:00.000Z';

const PERSON_EXAMPLE = { id: exampleId('per'), email: 'ada@example.com', name: 'Ada Lovelace' };
const WORKSPACE_EXAMPLE = { id: exampleId('ws'), name: 'Acme research', role: 'owner', createdAt: EXAMPLE_TIME };

export const Person = Type.Object({ id: idOf('per'), email: Type.String(), name: Type.String() }, { examples: [PERSON_EXAMPLE] });

export const Workspace = Type.Object({ id: idOf('ws'), name: Type.String(), role: RoleName, createdAt: Timestamp }, { examples: [WORKSPACE_EXAMPLE] });

/** What signing in, accepting an invite and finishing setup answer. */
export const SessionBody = Type.Object(
  {
    person: Person,
    expiresAt: Timestamp,
    workspaces: Type.Array(Workspace),
  },
  { examples: [{ person: PERSON_EXAMPLE, expiresAt: '2026-11-19T10:00:00.000Z', workspaces: [WORKSPACE_EXAMPLE] }] },
);

/** A page of a list; its example is a page holding the item's example. */
export const listOf = <T extends TSchema>(item: T) => {
  const itemExamples = (item as { examples?: unknown[] }).examples;
  return Type.Object(
    {
      data: Type.Array(item),
      nextCursor: Type.Union([Type.String(), Type.Null()], { description: 'Pass as ?cursor= for the next page; null on the last page.' }),
    },
    itemExamples?.length ? { examples: [{ data: [itemExamples[0]], nextCursor: null }] } : {},
  );
};

export const Paging = {
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 50 })),
  cursor: Type.Optional(Type.String({ maxLength: 200 })),
};

export const NoContent = Type.Null({ description: 'No content' });
