import type { Kysely, KyselyPlugin, OperationNode, PluginTransformQueryArgs, PluginTransformResultArgs, QueryId, QueryResult, RootOperationNode, UnknownRow } from 'kysely';

/**
 * Tells an in-process cache exactly when what it copied from some tables may have changed, so it
 * can serve copies without being wrong for a single request. Two sources, both read for free:
 * - writes through this process's connection: a Kysely plugin sees every insert, update and
 *   delete built with Kysely and counts those that touch a watched table, once the statement has
 *   run (so no reader can copy the old rows after the count moved: on SQLite's one connection,
 *   a write inside a transaction keeps direct reads out until the commit, direct-query.ts);
 * - commits by any other connection (another process, the CLI): SQLite's `PRAGMA data_version`.
 * Only where both are known (the SQLite connection connect.ts opened) is there a watch; elsewhere
 * (PostgreSQL, where other processes write through connections of their own with no counter to
 * read) `changeWatchOf` answers null and nothing may be cached.
 */
export interface ChangeWatch {
  /** Writes to the watched tables through this connection so far. */
  writesHere(): number;
  /** A number that differs whenever another connection has committed since it was last read. */
  commitsElsewhere(): number;
}

const watches = new WeakMap<Kysely<any>, { plugin: TableWriteCounter; commitsElsewhere: () => number }>();

/** Installed by connect.ts on the SQLite connection: `commitsElsewhere` reads its data_version. */
export function enableChangeWatch(db: Kysely<any>, plugin: TableWriteCounter, commitsElsewhere: () => number): void {
  watches.set(db, { plugin, commitsElsewhere });
}

/** A watch of `tables` on the connection `db` was opened as, or null where changes cannot be known for free. */
export function changeWatchOf(db: Kysely<any>, tables: readonly string[]): ChangeWatch | null {
  const installed = watches.get(db);
  if (!installed) return null;
  const counter = installed.plugin.counterFor(tables);
  return { writesHere: () => counter.count, commitsElsewhere: installed.commitsElsewhere };
}

/** The Kysely plugin behind writesHere: counts, per watched set of tables, the writes that ran. */
export class TableWriteCounter implements KyselyPlugin {
  private readonly counters: { tables: ReadonlySet<string>; count: number }[] = [];
  /** Writes waiting for their statement to run, with the counters they will move. */
  private readonly pending = new WeakMap<QueryId, { count: number }[]>();

  counterFor(tables: readonly string[]): { count: number } {
    const counter = { tables: new Set(tables), count: 0 };
    this.counters.push(counter);
    return counter;
  }

  transformQuery({ node, queryId }: PluginTransformQueryArgs): RootOperationNode {
    const table = writtenTable(node);
    if (table !== null) {
      const moved = this.counters.filter((counter) => counter.tables.has(table));
      if (moved.length > 0) this.pending.set(queryId, moved);
    }
    return node;
  }

  async transformResult({ result, queryId }: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    const moved = this.pending.get(queryId);
    if (moved) for (const counter of moved) counter.count += 1;
    return result;
  }
}

/** The table an insert, update or delete writes, or null for anything else. */
function writtenTable(node: RootOperationNode): string | null {
  switch (node.kind) {
    case 'InsertQueryNode':
      return tableName(node.into);
    case 'UpdateQueryNode':
      return tableName(node.table);
    case 'DeleteQueryNode':
      return tableName(node.from.froms[0]);
    default:
      return null;
  }
}

function tableName(node: OperationNode | undefined): string | null {
  if (!node) return null;
  if (node.kind === 'AliasNode') return tableName((node as unknown as { node: OperationNode }).node);
  if (node.kind === 'TableNode') return (node as unknown as { table: { identifier: { name: string } } }).table.identifier.name;
  return null;
}
