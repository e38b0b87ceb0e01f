import Database from 'better-sqlite3';
import { sql } from 'kysely';
import { decodeTime } from 'ulid';
import { afterEach, describe, expect, it } from 'vitest';
import { writeTransaction } from '../src/db/group-commit.js';
import { withStatementCache } from '../src/db/statement-cache.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { madeBefore, monotonicUlids, newId } from '../src/ids.js';
import { describeEachEngine, freshStorage } from './support/harness.js';

/** The parts that make storage cheaper per request: they must not change what is stored or seen. */

describe('statement cache', () => {
  it('reuses a prepared statement by its SQL text and keeps at most its capacity, least recently used out first', () => {
    const connection = new Database(':memory:');
    const cached = withStatementCache(connection, 2);
    const first = cached.prepare('select 1 as one');
    expect(cached.prepare('select 1 as one')).toBe(first);
    cached.prepare('select 2 as two');
    cached.prepare('select 1 as one'); // used: now the most recent
    cached.prepare('select 3 as three'); // evicts "select 2", the least recently used
    expect(cached.prepare('select 1 as one')).toBe(first);
    const two = cached.prepare('select 2 as two');
    expect(two.all([])).toEqual([{ two: 2 }]);

    expect(cached.prepare('select 2 as two')).toBe(two);

    // A statement read to the end by iteration (a streamed read) runs again from the start.
    connection.exec('create table t (n integer); insert into t values (1), (2)');
    const reading = cached.prepare('select n from t order by n');
    expect([...reading.iterate([])]).toEqual([{ n: 1 }, { n: 2 }]);
    expect(cached.prepare('select n from t order by n').all([])).toEqual([{ n: 1 }, { n: 2 }]);
    connection.close();
  });

  it('sees schema changes: a cached statement over a table runs against the table as it is now', () => {
    const connection = new Database(':memory:');
    const cached = withStatementCache(connection);
    connection.exec('create table t (a integer)');
    connection.exec('insert into t values (1)');
    expect(cached.prepare('select * from t').all([])).toEqual([{ a: 1 }]);
    connection.exec('alter table t add column b text');
    expect(cached.prepare('select * from t').all([])).toEqual([{ a: 1, b: null }]);
    connection.close();
  });
});

describe('ids', () => {
  it('are a prefix and a lower-case ULID, sorted by creation, also within one millisecond and when the clock steps back', () => {
    for (const id of [newId('rec'), newId('evt', Date.UTC(2026, 10, 22, 10))]) expect(id).toMatch(/^[a-z]+_[0-9a-hjkmnp-tv-z]{26}$/);
    // A generator of its own: the process's one remembers every id other tests in this worker made.
    const next = monotonicUlids();
    const at = Date.UTC(2026, 10, 22, 10);
    const ids = [`rec_${next(at)}`, `rec_${next(at)}`, `rec_${next(at + 1)}`, `rec_${next(at - 5000)}`, `evt_${next(at + 2)}`];
    for (const id of ids) expect(id).toMatch(/^[a-z]+_[0-9a-hjkmnp-tv-z]{26}$/);
    for (let i = 1; i < ids.length; i++) expect(madeBefore(ids[i - 1]!, ids[i]!)).toBe(true);
    // The first ten characters are the time in milliseconds, in Crockford base32.
    const later = at + 86_400_000;
    expect(decodeTime(next(later).toUpperCase())).toBe(later);
    const many = new Set(Array.from({ length: 5000 }, () => newId('req')));
    expect(many.size).toBe(5000);
  });
});

describeEachEngine('write transactions', (engine) => {
  let close: () => Promise<void> = async () => undefined;
  afterEach(async () => close());

  async function setUp() {
    const storage = await freshStorage(engine);
    close = storage.close;
    await migrateToLatest(storage.db);
    await sql`create table write_probe (n integer not null unique)`.execute(storage.db);
    return storage;
  }

  it('keep each write whole or not at all: a failing one is rolled back alone and only its caller hears of it', async () => {
    const { db } = await setUp();
    const insert = (n: number) => sql`insert into write_probe (n) values (${n})`;
    const results = await Promise.allSettled([
      writeTransaction(db, async (trx) => {
        await insert(1).execute(trx);
        return 'one';
      }),
      writeTransaction(db, async (trx) => {
        await insert(2).execute(trx);
        throw new Error('second fails after its insert');
      }),
      writeTransaction(db, async (trx) => {
        await insert(3).execute(trx);
        await insert(1).execute(trx); // breaks the unique index: the whole write goes, not just this statement
        return 'three';
      }),
      writeTransaction(db, async (trx) => {
        await insert(4).execute(trx);
        return 'four';
      }),
    ]);
    expect(results.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'rejected', 'fulfilled']);
    expect((results[1] as PromiseRejectedResult).reason.message).toBe('second fails after its insert');
    const { rows } = await sql<{ n: number }>`select n from write_probe order by n`.execute(db);
    expect(rows.map((row) => Number(row.n))).toEqual([1, 4]);
  });

  it('answer only after the commit: another connection sees none of a batch before its writes are answered', async () => {
    const storage = await setUp();
    const { db } = storage;
    const seenByOthers: number[] = [];
    const snapshotCount = async () => {
      // A separate connection (a fresh read snapshot) sees only committed rows.
      const snapshot = await storage.openSnapshot();
      try {
        const { rows } = await sql<{ count: number }>`select count(*) as count from write_probe`.execute(snapshot.db);
        return Number(rows[0]!.count);
      } finally {
        await snapshot.close();
      }
    };
    const writes = [1, 2, 3].map((n) =>
      writeTransaction(db, async (trx) => {
        await sql`insert into write_probe (n) values (${n})`.execute(trx);
        if (n === 3) seenByOthers.push(await snapshotCount());
        return n;
      }),
    );
    expect(await Promise.all(writes)).toEqual([1, 2, 3]);
    expect(await snapshotCount()).toBe(3);
    // On SQLite the three share one transaction, so none is visible before the last is done;
    // on PostgreSQL each commits on its own, so at most the two others are.
    if (engine === 'sqlite') expect(seenByOthers).toEqual([0]);
    else expect(seenByOthers[0]).toBeLessThanOrEqual(2);
  });
});
