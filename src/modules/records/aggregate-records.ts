import type { Deps } from '../../deps.js';
import { visitRows } from '../../db/row-stream.js';
import { findCollection } from '../collections/collections.js';
import { aggregatePageOf, buildAggregateStatement, parseAggregateQuery, rowTextLength, type AggregatePage, type AggregateQueryText } from './query/aggregate.js';
import { queryBudget, type QueryCaller } from './query/query-budget.js';
import { explainingUnreadable } from './list-records.js';

export type { AggregatePage } from './query/aggregate.js';

/**
 * A page of a collection's aggregate (query/aggregate.ts): its live records that the filter
 * matches, grouped, with their metrics. Grouping reads every matching record, so the statement
 * always runs under the caller's time budget and takes its turn in the caller's lane, as a
 * filtered list does (query/query-budget.ts): past the budget the request answers 400 naming it.
 * A page is bounded in bytes (PLAINBASE_PAGE_BYTES) as a list's is.
 */
export async function aggregateRecords(deps: Deps, workspaceId: string, idOrName: string, query: AggregateQueryText, caller: QueryCaller = 'credentialed'): Promise<AggregatePage> {
  const request = parseAggregateQuery(query);
  const collection = await findCollection(deps.db, workspaceId, idOrName);
  const compiled = buildAggregateStatement(
    { executor: deps.db, dialect: deps.dialect, workspaceId, collectionId: collection.id, trashed: false, budgeted: true },
    request,
  );
  const rows: Record<string, unknown>[] = [];
  let length = 0;
  const budget = queryBudget(deps, workspaceId, caller, true);
  // A group's value can be a long text: rows are read a batch at a time, and no further than the page's bytes can reach.
  const batchRows = Math.min(request.limit + 1, 100);
  await explainingUnreadable(deps, workspaceId, collection.id, budget.run((timeLimitMs) =>
    visitRows<Record<string, unknown>>(deps.db, compiled, { batchRows, maxRows: request.limit + 1, timeLimitMs }, (row) => {
      rows.push(row);
      length += rowTextLength(row);
      return length <= deps.config.pageBytes;
    })));
  return aggregatePageOf(request, rows, deps.config.pageBytes);
}
