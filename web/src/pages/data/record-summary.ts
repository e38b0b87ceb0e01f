import type { RecordItem } from '../../api-types.js';

/** A record's data on one line, cut to `max` characters, to name it in a picker or a question. */
export function recordSummary(record: RecordItem, max: number): string {
  const text = JSON.stringify(record.data);
  return text.length > max ? `${text.slice(0, max)}…` : text;
}
