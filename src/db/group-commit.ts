import { sql, type Transaction } from 'kysely';
import { fastPathOn } from './fast-paths.js';
import { dialectOf } from './dialect.js';
import type { Database, Db } from './schema.js';

type Work<T> = (trx: Transaction<Database>) => Promise<T>;

interface Job {
  work: Work<unknown>;
  resolve(value: unknown): void;
  reject(error: unknown): void;
  outcome?: { ok: true; value: unknown } | { ok: false; error: unknown };
}

/** Most writes sharing one commit: each waits for the others before it is answered. */
const MAX_BATCH = 64;

const committers = new WeakMap<Db, GroupCommitter>();

/**
 * Runs `work` in a transaction, like `db.transaction().execute(work)`; its result is returned
 * only once it is committed. On SQLite, writes that arrive together share one transaction and
 * one commit (group commit), each in a savepoint of its own: one write failing rolls back only
 * its own changes and rejects only its own caller. SQLite has one connection, so the writes
 * would run one after the other anyway; sharing the commit saves writing the same table and
 * index pages to the WAL once per write (a single-row transaction writes about ten pages).
 * Durability is the same: nobody hears of a write before the commit that holds it.
 * Where the Dialect says commits are not grouped (PostgreSQL: each write has a pooled connection
 * of its own), each write keeps its own transaction.
 *
 * `work` must use only `trx` and must not wait for anything but its own queries: the writes
 * batched with it wait too. It must not call writeTransaction itself.
 */
export function writeTransaction<T>(db: Db, work: Work<T>): Promise<T> {
  if (!dialectOf(db).groupsCommits || !fastPathOn('group-commit')) return db.transaction().execute(work);
  let committer = committers.get(db);
  if (!committer) {
    committer = new GroupCommitter(db);
    committers.set(db, committer);
  }
  return committer.run(work);
}

class GroupCommitter {
  private readonly queue: Job[] = [];
  private draining = false;

  constructor(private readonly db: Db) {}

  run<T>(work: Work<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ work, resolve: resolve as (value: unknown) => void, reject });
      if (!this.draining) {
        this.draining = true;
        // One turn of the event loop first: requests already past their authentication join
        // this batch instead of starting one each.
        setImmediate(() => void this.drain());
      }
    });
  }

  private async drain(): Promise<void> {
    try {
      while (this.queue.length > 0) await this.commitBatch();
    } finally {
      this.draining = false;
    }
  }

  private async commitBatch(): Promise<void> {
    const batch: Job[] = [];
    try {
      await this.db.transaction().execute(async (trx) => {
        // Writes that arrive while this batch runs join it.
        while (this.queue.length > 0 && batch.length < MAX_BATCH) {
          const job = this.queue.shift()!;
          batch.push(job);
          await sql`savepoint group_commit_write`.execute(trx);
          try {
            job.outcome = { ok: true, value: await job.work(trx) };
          } catch (error) {
            job.outcome = { ok: false, error };
            await sql`rollback to savepoint group_commit_write`.execute(trx);
          }
          await sql`release savepoint group_commit_write`.execute(trx);
        }
      });
    } catch (error) {
      // BEGIN, a savepoint or the COMMIT failed: nothing of the batch was kept.
      if (batch.length === 0) batch.push(...this.queue.splice(0, 1));
      for (const job of batch) job.reject(error);
      return;
    }
    for (const job of batch) {
      const outcome = job.outcome!;
      if (outcome.ok) job.resolve(outcome.value);
      else job.reject(outcome.error);
    }
  }
}
