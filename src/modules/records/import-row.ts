import { AppError, type ErrorCode } from '../../errors.js';

/**
 * What the import parsers (parse-ndjson.ts, parse-json-array.ts, parse-csv.ts) hand to the import
 * service: one row of the body at a time, either its data or why it cannot be read. The service
 * decides what a refused row means (stop everything, or report it and go on).
 */

/** Why one row was refused: the shape of an error body, without the request id. */
export interface RowError {
  code: ErrorCode;
  message: string;
  details?: Record<string, unknown>;
}

/**
 * `line` is 1-based: the physical line where the row starts (NDJSON, CSV), or the position of
 * the element in a JSON array (its index + 1).
 */
export type ImportRow = { line: number; data: unknown } | { line: number; error: RowError };

export const rowError = (code: ErrorCode, message: string, details?: Record<string, unknown>): RowError =>
  details ? { code, message, details } : { code, message };

/** How messages name a row: JSON arrays have items, the other formats lines. */
export type RowUnit = 'Line' | 'Item';

/**
 * The error answered when a row stops the import: its code and message, with details
 * `{line, errors}` (and the schema version for schema failures) so callers find the row.
 */
export function importFailure(unit: RowUnit, line: number, error: RowError): AppError {
  const details = { line, errors: [{ message: error.message }], ...error.details };
  const sentence = error.message.charAt(0).toLowerCase() + error.message.slice(1);
  return new AppError(error.code, `${unit} ${line}: ${sentence}`, details);
}
