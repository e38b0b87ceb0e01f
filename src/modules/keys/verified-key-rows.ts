import type { Kysely } from 'kysely';
import { changeWatchOf, type ChangeWatch } from '../../db/change-watch.js';
import { LruMap } from '../../lru-map.js';

/** Keys whose rows are kept at once; past it the least recently used goes first. */
const CAPACITY = 10_000;

/** Every table the key check reads, or whose rows could change what it reads (cascades). */
const TABLES = ['api_keys', 'api_key_secrets', 'memberships', 'service_accounts', 'people', 'workspaces'];

/**
 * The database rows behind recently used API keys (the key, its secrets, the role behind it), so
 * that a request with a key need not read them again while nothing could have changed them. Exact:
 * the copies are dropped, all at once, as soon as any of those tables is written through this
 * process or anything at all is committed by another connection (db/change-watch.ts), so a revoked,
 * rotated or demoted key is refused on the very next request. Only the rows are kept: every check
 * (the secret's hash in constant time, expiry against the clock, the role's abilities) still runs
 * on every request. Where changes cannot be known for free (PostgreSQL, with other processes
 * writing) there is no cache and every request reads the database.
 */
export class VerifiedKeyRows<Row> {
  private readonly rows = new LruMap<string, Row[]>(CAPACITY);
  private writesHere = -1;
  private commitsElsewhere = -1;

  private constructor(private readonly watch: ChangeWatch) {}

  private static readonly caches = new WeakMap<Kysely<any>, VerifiedKeyRows<unknown> | null>();

  /** The cache of the connection `db`, or null where there can be none. */
  static of<Row>(db: Kysely<any>): VerifiedKeyRows<Row> | null {
    let cache = VerifiedKeyRows.caches.get(db);
    if (cache === undefined) {
      const watch = changeWatchOf(db, TABLES);
      cache = watch ? new VerifiedKeyRows<unknown>(watch) : null;
      VerifiedKeyRows.caches.set(db, cache);
    }
    return cache as VerifiedKeyRows<Row> | null;
  }

  /** The rows of the key as last read, if nothing has changed since. */
  get(keyId: string): Row[] | undefined {
    const writesHere = this.watch.writesHere();
    const commitsElsewhere = this.watch.commitsElsewhere();
    if (writesHere !== this.writesHere || commitsElsewhere !== this.commitsElsewhere) {
      this.rows.clear();
      this.writesHere = writesHere;
      this.commitsElsewhere = commitsElsewhere;
      return undefined;
    }
    return this.rows.get(keyId);
  }

  /** Keeps rows just read, valid as of the last `get` (the caller read them right after it, synchronously). */
  set(keyId: string, rows: Row[]): void {
    this.rows.set(keyId, rows);
  }
}
