import { sql, type KyselyPlugin } from 'kysely';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { Storage } from '../src/db/connect.js';
import { directQuery } from '../src/db/direct-query.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { describeEachEngine, freshStorage } from './support/harness.js';

const workspaceNamed = directQuery<{ id: string; name: string }>('test_workspace_named', (parameter) => `
  select id, name from workspaces where name = ${parameter(1)} or (name = ${parameter(2)} and ${parameter(1)} = 'never')
  order by id`);

const addWorkspace = (storage: Storage, id: string, name: string) =>
  storage.db.insertInto('workspaces').values({ id, name, created_at: new Date().toISOString() }).execute();

describeEachEngine('direct queries', (engine) => {
  let storage: Storage;
  beforeEach(async () => {
    storage = await freshStorage(engine);
    await migrateToLatest(storage.db);
  });
  afterEach(async () => { await storage.close(); });

  it('answer what Kysely answers for the same SQL, with parameters reused and in any order', async () => {
    await addWorkspace(storage, 'wsp_1', 'north');
    await addWorkspace(storage, 'wsp_2', 'south');
    const rows = workspaceNamed.run(storage.db, ['north', 'south']);
    // SQLite answers synchronously: the caller may stay synchronous.
    const now = workspaceNamed.readNow(storage.db, ['north', 'south']);
    if (engine === 'sqlite') expect(Array.isArray(now)).toBe(true);
    else expect(now).toBeNull();
    if (engine === 'sqlite') expect(now).toEqual(await rows);
    expect(await rows).toEqual([{ id: 'wsp_1', name: 'north' }]);
    const viaKysely = await sql<{ id: string; name: string }>`select id, name from workspaces where name = ${'north'} order by id`.execute(storage.db);
    expect(await rows).toEqual(viaKysely.rows);
    expect(await workspaceNamed.run(storage.db, ['nowhere', 'south'])).toEqual([]);
  });

  it('never read another caller\'s uncommitted writes: during an open transaction they wait for it', async () => {
    let seenDuring: unknown;
    let pending: ReturnType<typeof workspaceNamed.run> | undefined;
    await storage.db.transaction().execute(async (trx) => {
      await trx.insertInto('workspaces').values({ id: 'wsp_3', name: 'east', created_at: new Date().toISOString() }).execute();
      pending = workspaceNamed.run(storage.db, ['east', 'x']);
      // On SQLite the one connection is inside this transaction: the read must not run now.
      expect(workspaceNamed.readNow(storage.db, ['east', 'x'])).toBeNull();
      if (engine === 'sqlite') expect(pending).toBeInstanceOf(Promise);
      else seenDuring = await pending; // PostgreSQL: another pooled connection, which sees the committed state.
    });
    if (engine === 'sqlite') expect(await pending).toEqual([{ id: 'wsp_3', name: 'east' }]);
    else expect(seenDuring).toEqual([]);
    expect(await workspaceNamed.run(storage.db, ['east', 'x'])).toEqual([{ id: 'wsp_3', name: 'east' }]);
  });

  it('go through Kysely, plugins included, for a transaction or a Kysely instance with plugins', async () => {
    await addWorkspace(storage, 'wsp_4', 'west');
    const seen: string[] = [];
    const plugin: KyselyPlugin = { transformQuery: (args) => { seen.push(args.node.kind); return args.node; }, transformResult: async (args) => args.result };
    expect(await workspaceNamed.run(storage.db.withPlugin(plugin), ['west', 'x'])).toEqual([{ id: 'wsp_4', name: 'west' }]);
    expect(seen).toEqual(['RawNode']);
    const inside = await storage.db.transaction().execute(async (trx) => {
      await trx.insertInto('workspaces').values({ id: 'wsp_5', name: 'west', created_at: new Date().toISOString() }).execute();
      // The transaction sees its own write.
      return workspaceNamed.run(trx, ['west', 'x']);
    });
    expect(inside).toEqual([{ id: 'wsp_4', name: 'west' }, { id: 'wsp_5', name: 'west' }]);
  });
});
