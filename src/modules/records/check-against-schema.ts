import { performance } from 'node:perf_hooks';
import { rowLimit } from '../../db/row-limit.js';
import { visitRows } from '../../db/row-stream.js';
import type { Deps } from '../../deps.js';
import { findCollection } from '../collections/collections.js';
import { describeErrors, validatorFor } from '../schemas/compile-schema.js';
import { getSchemaVersion } from '../schemas/schema-versions.js';
import { readAhead } from './read-ahead.js';

/** How many live records one check looks at, at most, and for how long: it answers a person waiting on a page. */
export const CHECK_LIMITS = { maxRecords: 10_000, maxMilliseconds: 2_000 };
const PAGE_ROWS = 200;
const MAX_EXAMPLES = 5;

export interface SchemaCheck {
  version: number;
  /** Live records looked at, oldest first. */
  checked: number;
  /** Of those, how many the version would refuse. */
  notMatching: number;
  /** False when the limits stopped the check before the last record: the counts are a lower bound. */
  complete: boolean;
  /** The first few records that would not match, with the first reason each. */
  examples: { recordId: string; field: string; message: string }[];
}

/**
 * How many of the collection's live records a schema version would refuse, before anyone activates
 * it: activating never re-checks stored records, so this is the only warning. Read-only, page by
 * page with no transaction held, within CHECK_LIMITS.
 */
export async function checkRecordsAgainstSchema(
  deps: Deps,
  workspaceId: string,
  idOrName: string,
  version: number,
  limits: { maxRecords: number; maxMilliseconds: number } = CHECK_LIMITS,
): Promise<SchemaCheck> {
  const collection = await findCollection(deps.db, workspaceId, idOrName);
  const schemaVersion = await getSchemaVersion(deps.db, workspaceId, collection.id, version);
  const validate = validatorFor(schemaVersion.id, schemaVersion.schema);
  const result: SchemaCheck = { version, checked: 0, notMatching: 0, complete: true, examples: [] };
  const started = performance.now();
  let after: string | null = null;
  for (;;) {
    const remaining = limits.maxRecords - result.checked;
    if (remaining <= 0 || performance.now() - started > limits.maxMilliseconds) {
      result.complete = !(await anyLiveRecordAfter(deps, workspaceId, collection.id, after));
      return result;
    }
    const pageRows = Math.min(PAGE_ROWS, remaining);
    let query = deps.db
      .selectFrom('records')
      .select(['id', 'data'])
      .where('workspace_id', '=', workspaceId)
      .where('collection_id', '=', collection.id)
      .where('trashed_at', 'is', null);
    if (after !== null) query = query.where('id', '>', after);
    let read = 0;
    await visitRows<{ id: string; data: unknown }>(deps.db, query.orderBy('id').limit(rowLimit(pageRows)).compile(), readAhead(deps, pageRows), (row) => {
      read += 1;
      after = row.id;
      result.checked += 1;
      if (!validate(deps.dialect.readJson(row.data))) {
        result.notMatching += 1;
        if (result.examples.length < MAX_EXAMPLES) {
          const [first] = describeErrors(validate.errors);
          result.examples.push({ recordId: row.id, field: first?.field ?? 'data', message: first?.message ?? 'is not valid' });
        }
      }
      return true;
    });
    if (read < pageRows) return result;
  }
}

async function anyLiveRecordAfter(deps: Deps, workspaceId: string, collectionId: string, after: string | null): Promise<boolean> {
  let query = deps.db
    .selectFrom('records')
    .select('id')
    .where('workspace_id', '=', workspaceId)
    .where('collection_id', '=', collectionId)
    .where('trashed_at', 'is', null);
  if (after !== null) query = query.where('id', '>', after);
  return (await query.limit(1).executeTakeFirst()) !== undefined;
}
