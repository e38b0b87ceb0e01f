import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { RECORD_WRITERS_FILE, recordWritersSource } from '../scripts/generate-record-writers.js';

/**
 * The record writers are generated from the record's definition into a committed file: that file
 * must be exactly what the generator makes of the definition today, or a field added without
 * running it would be missing from answers, exports and events.
 */
it('src/modules/records/record-writers.ts is what scripts/generate-record-writers.ts makes (run it after changing a record field or view)', () => {
  const made = recordWritersSource();
  expect(made).toContain('export function recordJson(record: RecordRead): string');
  expect(readFileSync(RECORD_WRITERS_FILE, 'utf8')).toBe(made);
});
