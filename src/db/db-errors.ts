import { AppError, unreadableRecords, type ErrorCode } from '../errors.js';
import type { Dialect } from './dialect.js';

/**
 * A driver error the app understands, as the app error it answers with: translated once, where
 * queries run (kysely-dialect.ts for Kysely's queries, direct-query.ts and row-stream.ts for the
 * direct paths), so that nothing above src/db sees a driver's error codes. The driver's own error
 * is the cause (for logs, and for Dialect's recognisers). Errors no mapping knows stay as they
 * are: the HTTP layer answers them 500 without echoing them.
 */
export abstract class DatabaseError extends AppError {
  constructor(code: ErrorCode, message: string, details: Record<string, unknown> | undefined, cause: unknown) {
    super(code, message, details);
    this.cause = cause;
  }
}

/** A unique constraint or unique index refused the write. */
export class UniqueViolation extends DatabaseError {
  constructor(cause: unknown) {
    super('CONFLICT', 'That already exists.', undefined, cause);
  }
}

/** The database cannot be reached, or is too busy to answer now: worth trying again shortly. */
export class DatabaseUnavailable extends DatabaseError {
  constructor(cause: unknown) {
    super('UNAVAILABLE', 'The database cannot be reached right now; try again shortly.', undefined, cause);
  }
}

/** A JSON function met stored data it cannot read (Dialect.isUnreadableJson). */
export class UnreadableJson extends DatabaseError {
  constructor(cause: unknown) {
    const refusal = unreadableRecords();
    super(refusal.code, refusal.message, refusal.details, cause);
  }
}

/**
 * A statement ran past its time budget (Dialect.isStatementTimeout). The caller that set the
 * budget knows which one it was and answers with its own message (records/query/query-budget.ts).
 */
export class StatementTimedOut extends DatabaseError {
  constructor(cause: unknown) {
    super('INVALID_REQUEST', 'The query took longer than its time budget allows.', undefined, cause);
  }
}

/** The database does not know the time zone a statement named (Dialect.isUnknownTimeZone). */
export class UnknownTimeZone extends DatabaseError {
  constructor(cause: unknown) {
    super('INVALID_REQUEST', 'The database does not know this time zone.', { field: 'querystring.tz' }, cause);
  }
}

/** The app error for a driver error the dialect recognises, or the error as it is. */
export function mapDriverError(dialect: Dialect, error: unknown): unknown {
  if (error instanceof DatabaseError) return error;
  if (dialect.isUniqueViolation(error)) return new UniqueViolation(error);
  if (dialect.isUnavailable(error)) return new DatabaseUnavailable(error);
  if (dialect.isUnreadableJson(error)) return new UnreadableJson(error);
  if (dialect.isStatementTimeout(error)) return new StatementTimedOut(error);
  if (dialect.isUnknownTimeZone(error)) return new UnknownTimeZone(error);
  return error;
}

export const isUniqueViolation = (error: unknown): error is UniqueViolation => error instanceof UniqueViolation;
export const isUnreadableJson = (error: unknown): error is UnreadableJson => error instanceof UnreadableJson;
export const isStatementTimedOut = (error: unknown): error is StatementTimedOut => error instanceof StatementTimedOut;
