/**
 * The closed set of error codes of docs/design.md §2, each with its HTTP status. Every error the API
 * answers with is an AppError; anything else becomes INTERNAL and its message is never echoed.
 */
export const ERROR_STATUS = {
  INVALID_REQUEST: 400,
  INVALID_WEBHOOK_URL: 400,
  UNAUTHENTICATED: 401,
  INVALID_API_KEY: 401,
  API_KEY_EXPIRED: 401,
  MISSING_SCOPE: 403,
  COLLECTION_NOT_ALLOWED: 403,
  PERSON_REQUIRED: 403,
  FORBIDDEN: 403,
  ORIGIN_NOT_ALLOWED: 403,
  CAPTCHA_FAILED: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  PRECONDITION_FAILED: 412,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  SCHEMA_VALIDATION_FAILED: 422,
  RATE_LIMITED: 429,
  INTERNAL: 500,
  UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export class AppError extends Error {
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
    /** Extra response headers, such as retry-after. */
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.status = ERROR_STATUS[code];
  }
}

export const notFound = (what: string) => new AppError('NOT_FOUND', `No such ${what} in this workspace.`);
export const invalidRequest = (message: string, details?: Record<string, unknown>) =>
  new AppError('INVALID_REQUEST', message, details);
export const conflict = (message: string, details?: Record<string, unknown>) => new AppError('CONFLICT', message, details);
export const forbidden = (message: string) => new AppError('FORBIDDEN', message);
export const rateLimited = (retryAfterSeconds: number, message = 'Too many requests; try again later.') =>
  new AppError('RATE_LIMITED', message, { retryAfterSeconds }, { 'retry-after': String(Math.max(1, Math.ceil(retryAfterSeconds))) });

/**
 * Records stored before JSON was limited to 100 levels may nest deeper than SQLite's JSON
 * functions read (1,000 levels): a filter, sort or index on data fields then cannot run until
 * they are replaced or deleted (docs/security.md). `records` names them when known.
 */
export const unreadableRecords = (records?: string[]) =>
  conflict(
    'Records stored before JSON was limited to 100 levels nest deeper than the database can query (1,000 levels), so filters, sorts and indexes on data fields cannot run over them; ' +
      `replace their data or delete them${records?.length ? `: ${records.join(', ')}` : ''}.`,
    { limit: 1000, ...(records ? { records } : {}) },
  );
