import type { RecordItem } from '../../api-types.js';

/** A record's data on one line, cut to `max` characters, to name it in a picker or a question. */
export function recordSummary(record: RecordItem, max: number): string {
  const text = JSON.stringify(record.data);
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/**
 * A record's fields in words, `name: Ada · age: 36`, cut to `max` characters: for a list where
 * people pick a record by what it says. Text shows as it is, other values as JSON.
 */
export function recordFieldsSummary(record: RecordItem, max: number): string {
  const data = record.data as Record<string, unknown>;
  const parts = Object.entries(data).map(([name, value]) => `${name}: ${typeof value === 'string' ? value : JSON.stringify(value)}`);
  const text = parts.length > 0 ? parts.join(' · ') : '(no fields)';
  return text.length > max ? `${text.slice(0, max)}…` : text;
}
