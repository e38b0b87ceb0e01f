import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import pg from 'pg';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { connectStorage, type Storage } from '../src/db/connect.js';
import { migrateToLatest, migratorFor } from '../src/db/migrate.js';
import { eventMessageText } from '../src/modules/events/outbox.js';
import { describeEachEngine, freshStorage } from './support/harness.js';

async function appliedMigrations(storage: Storage): Promise<string[]> {
  const rows = await storage.db.selectFrom('plainbase_migrations' as never).select(sql<string>`name`.as('name')).orderBy(sql`name`).execute();
  return rows.map((row) => (row as { name: string }).name);
}

describeEachEngine('migrations', (engine) => {
  let storage: Awaited<ReturnType<typeof freshStorage>>;
  afterEach(async () => {
    await storage?.close();
  });

  it('apply every migration once, in order; running again is a no-op', async () => {
    storage = await freshStorage(engine);
    const first = await migrateToLatest(storage.db);
    expect(first.length).toBeGreaterThan(0);
    expect(first[0]).toBe('0001-foundation');
    expect(first).toEqual([...first].sort());
    expect(await migrateToLatest(storage.db)).toEqual([]);
    expect(await appliedMigrations(storage)).toEqual(first);
    // The schema is really there: the first table of the first migration answers.
    await expect(storage.db.selectFrom('people').select('id').execute()).resolves.toEqual([]);
  });

  it('0007 keeps each outbox event\'s data out of its stored message, and back again, byte for byte', async () => {
    storage = await freshStorage(engine);
    const migrator = await migratorFor(storage.db);
    expect((await migrator.migrateTo('0006-lighter-outbox')).error).toBeUndefined();
    // Data whose own text holds `,"data":`, escapes and characters beyond ASCII.
    const data = JSON.stringify({ record: { id: 'rec_1', data: { note: ',"data":{} \\ \" é 🚀', list: [1.5, null, { data: 2 }] } } });
    const message = `{"id":"evt_1","type":"record.created","createdAt":"2026-11-24T03:00:00.000Z","workspaceId":"ws_1","collectionId":"col_1","data":${data}}`;
    const row = { id: 'evt_1', workspace_id: 'ws_1', collection_id: 'col_1', type: 'record.created', created_at: '2026-11-24T03:00:00.000Z' };
    await sql`insert into events (id, workspace_id, collection_id, type, message, created_at) values (${row.id}, ${row.workspace_id}, ${row.collection_id}, ${row.type}, ${message}, ${row.created_at})`.execute(storage.db);

    expect((await migrator.migrateTo('0007-event-data')).error).toBeUndefined();
    const migrated = await storage.db.selectFrom('events').select(['id', 'type', 'created_at', 'workspace_id', 'collection_id', 'data']).executeTakeFirstOrThrow();
    expect(migrated.data).toBe(data);
    expect(eventMessageText(migrated)).toBe(message);

    expect((await migrator.migrateDown()).error).toBeUndefined();
    const { rows } = await sql<{ message: string }>`select message from events`.execute(storage.db);
    expect(rows).toEqual([{ message }]);
  });
});

describe('migrations [sqlite file]', () => {
  it('a second process opening the same file finds it up to date', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'plainbase-migrate-'));
    const file = path.join(dir, 'plainbase.db');
    try {
      const first = await connectStorage({ engine: 'sqlite', file });
      const applied = await migrateToLatest(first.db);
      await first.close();
      const second = await connectStorage({ engine: 'sqlite', file });
      expect(await migrateToLatest(second.db)).toEqual([]);
      expect(await appliedMigrations(second)).toEqual(applied);
      await second.close();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

(inject('postgresUrl') === null ? describe.skip : describe)('migrations [postgres, concurrent]', () => {
  it('three pools (as three processes would) migrating one fresh schema at once all succeed, and each migration runs once', async () => {
    const url = inject('postgresUrl')!;
    const schema = `test_${randomBytes(6).toString('hex')}`;
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query(`create schema ${schema}`);
    const storages = await Promise.all([0, 1, 2].map(() => connectStorage({ engine: 'postgres', url }, { schema, poolSize: 3 })));
    try {
      const results = await Promise.all(storages.map((storage) => migrateToLatest(storage.db)));
      const all = results.flat();
      // Between them they applied every migration exactly once; the others found nothing to do.
      expect(new Set(all).size).toBe(all.length);
      expect(await appliedMigrations(storages[0]!)).toEqual([...all].sort());
      const { rows } = await admin.query(`select name, count(*)::int as n from ${schema}.plainbase_migrations group by name having count(*) > 1`);
      expect(rows).toEqual([]);
    } finally {
      await Promise.all(storages.map((storage) => storage.close()));
      await admin.query(`drop schema if exists ${schema} cascade`);
      await admin.end();
    }
  });
});
