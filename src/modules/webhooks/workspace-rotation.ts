import { sql, type RawBuilder } from 'kysely';
import type { Dialect } from '../../db/dialect.js';
import type { Executor } from '../../db/schema.js';

/**
 * Workspaces taken in turns, for the worker's fair fan-out (fair-fan-out.ts) and fair claim
 * (fair-claim.ts): each round looks at the workspaces that have rows waiting in a partial index,
 * at most `max` of them, in id order. A round cut short at `max` remembers where it stopped and
 * the next one goes on from there, round the circle; a round that saw them all starts the next
 * from the beginning, with one statement.
 *
 * A caller may accept the last round's list instead of a new scan (next's `reuse`), when that
 * round saw every workspace less than REUSE_MS ago: a busy worker's rounds follow each other every
 * few milliseconds, and one statement less in each is what keeps one workspace's drain as fast as
 * it was before the rounds were split per workspace. A workspace that got rows since is left out
 * until the next scan; callers ask for one whenever they know rows were added (fair-claim.ts).
 */
export class WorkspaceRotation {
  /** Where the last round stopped, per database (the worker's key), when it was cut short. */
  private readonly stoppedAt = new WeakMap<object, string>();
  /** The last scan that saw every workspace, per database, and when (performance.now()). */
  private readonly lastFull = new WeakMap<object, { workspaces: string[]; at: number }>();

  constructor(
    /** The statement that finds the workspaces after `after` (workspacesIn). */
    private readonly scan: (dialect: Dialect, after: string, max: number) => RawBuilder<{ workspace_id: string }>,
    private readonly max: number,
  ) {}

  /** This round's workspaces, and whether some were left for the next round. */
  async next(trx: Executor, dialect: Dialect, key: object, reuse = false): Promise<{ workspaces: string[]; more: boolean }> {
    const last = this.lastFull.get(key);
    if (reuse && last && performance.now() - last.at < REUSE_MS) return { workspaces: last.workspaces, more: false };
    const after = this.stoppedAt.get(key) ?? '';
    let workspaces = (await this.scan(dialect, after, this.max).execute(trx)).rows.map((row) => row.workspace_id);
    if (workspaces.length < this.max && after !== '') {
      // Round the circle: the workspaces up to where the last round stopped.
      const seen = new Set(workspaces);
      const wrapped = (await this.scan(dialect, '', this.max - workspaces.length).execute(trx)).rows.map((row) => row.workspace_id);
      workspaces = [...workspaces, ...wrapped.filter((id) => !seen.has(id))];
    }
    const more = workspaces.length >= this.max;
    if (more) {
      this.stoppedAt.set(key, workspaces[workspaces.length - 1]!);
      this.lastFull.delete(key);
    } else {
      this.stoppedAt.delete(key);
      this.lastFull.set(key, { workspaces, at: performance.now() });
    }
    return { workspaces, more };
  }
}

/** How long a scan that saw every workspace may stand in for the next (WorkspaceRotation). */
export const REUSE_MS = 250;

/**
 * The workspaces with rows in `source` that meet `condition`, in id order after `after`, at most
 * `max`: a loose index scan, one probe of the source's (workspace_id, …) index per workspace,
 * never the rows themselves, however many one workspace has.
 */
export function workspacesIn(source: RawBuilder<unknown>, condition: RawBuilder<unknown>, after: string, max: number) {
  return sql<{ workspace_id: string }>`with recursive found(workspace_id) as (
      select (select min(workspace_id) from ${source} where ${condition} and workspace_id > ${after})
      union all
      select (select min(workspace_id) from ${source} where ${condition} and workspace_id > found.workspace_id)
        from found where found.workspace_id is not null
    )
    select workspace_id from found where workspace_id is not null limit ${max}`;
}
