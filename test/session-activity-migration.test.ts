import { afterEach, expect, it } from 'vitest';
import { ManualClock } from '../src/clock.js';
import type { Storage } from '../src/db/connect.js';
import { migratorFor } from '../src/db/migrate.js';
import { findSession } from '../src/modules/sessions/sessions.js';
import { sha256Hex } from '../src/secrets.js';
import { buildDeps } from '../src/build-services.js';
import { describeEachEngine, freshStorage, testConfig } from './support/harness.js';

/** Sessions open before 0013 keep working after it: an id from their digest, last used when opened. */
describeEachEngine('migration 0013-session-activity', (engine) => {
  let storage: Storage | undefined;
  afterEach(async () => {
    await storage?.close();
    storage = undefined;
  });

  it('gives existing sessions an id and a last use; they keep working, and it goes back again', async () => {
    storage = await freshStorage(engine);
    const { db } = storage;
    const migrator = await migratorFor(db);
    expect((await migrator.migrateTo('0012-postgres-pending-events')).error).toBeUndefined();
    const at = '2026-11-20T10:00:00.000Z';
    await db.insertInto('people').values({ id: 'per_01m8a5y4sgdyvvc9ey634vccyw', email: 'old@example.com', name: 'Old', password_hash: 'x', created_at: at } as never).execute();
    const tokens = ['an old session token', 'another old session token'];
    for (const token of tokens) {
      await db.insertInto('sessions').values({ token_hash: sha256Hex(token), person_id: 'per_01m8a5y4sgdyvvc9ey634vccyw', created_at: at, expires_at: '2026-11-27T10:00:00.000Z' } as never).execute();
    }

    expect((await migrator.migrateToLatest()).error).toBeUndefined();
    const rows = await db.selectFrom('sessions').select(['id', 'token_hash', 'last_used_at', 'ip', 'user_agent']).orderBy('id').execute();
    expect(rows).toHaveLength(2);
    for (const row of rows) {
      expect(row).toMatchObject({ id: `ses_${row.token_hash.slice(0, 26)}`, last_used_at: at, ip: null, user_agent: null });
      expect(row.id).toMatch(/^ses_[0-9a-z]{26}$/);
    }
    // A day after it was opened: within the idle limit (3 days) and the lifetime (7).
    const clock = new ManualClock('2026-11-21T10:00:00.000Z');
    const deps = buildDeps(testConfig(), { ...storage, db }, clock);
    expect((await findSession(deps, tokens[0]!))?.person.email).toBe('old@example.com');

    expect((await migrator.migrateTo('0012-postgres-pending-events')).error).toBeUndefined();
    expect(await db.selectFrom('sessions').selectAll().execute()).toHaveLength(2);
  });
});
