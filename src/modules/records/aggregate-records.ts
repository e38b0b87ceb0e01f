import type { Deps } from '../../deps.js';
import { visitRows } from '../../db/row-stream.js';
import { findCollection } from '../collections/collections.js';
import { aggregatePageOf, buildAggregateStatement, parseAggregateQuery, type AggregatePage, type AggregateQueryText } from './query/aggregate.js';
import { queryBudget, type QueryCaller } from './query/query-budget.js';
import { explainingUnreadable } from './list-records.js';

export type { AggregatePage } from './query/aggregate.js';

/**
 * A page of a collection's aggregate (query/aggregate.ts): its live records that the filter
 * matches, grouped, with their metrics. Grouping reads every matching record, so the statement
 * always runs under the caller's time budget and takes its turn in the caller's lane, as a
 * filtered list does (query/query-budget.ts): past the budget the request answers 400 naming it.
 */
export async function aggregateRecords(deps: Deps, workspaceId: string, idOrName: string, query: AggregateQueryText, caller: QueryCaller = 'credentialed'): Promise<AggregatePage> {
  const request = parseAggregateQuery(query);
  const collection = await findCollection(deps.db, workspaceId, idOrName);
  const compiled = buildAggregateStatement(
    { executor: deps.db, dialect: deps.dialect, workspaceId, collectionId: collection.id, trashed: false, budgeted: true },
    request,
  );
  const rows: Record<string, unknown>[] = [];
  const budget = queryBudget(deps, workspaceId, caller, true);
  await explainingUnreadable(deps, workspaceId, collection.id, budget.run((timeLimitMs) =>
    visitRows<Record<string, unknown>>(deps.db, compiled, { batchRows: request.limit + 1, maxRows: request.limit + 1, timeLimitMs }, (row) => {
      rows.push(row);
      return true;
    })));
  return aggregatePageOf(request, rows);
}
