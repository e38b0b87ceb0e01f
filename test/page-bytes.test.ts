import { CompiledQuery, sql } from 'kysely';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { writeJson } from '../src/db/dialect.js';
import { visitRows } from '../src/db/row-stream.js';
import { newId } from '../src/ids.js';
import { Client, signedInOwner } from './support/client.js';
import { describeEachEngine, freshStorage, startTestApp, type TestApp } from './support/harness.js';

/**
 * Pages are bounded in bytes as well as rows (PLAINBASE_PAGE_BYTES, docs/queries.md): a page of
 * large records ends early with a cursor, and the server reads no further rows than the page needs.
 */

const MB = 1_000_000;
const MiB = 1024 * 1024;

describeEachEngine('page byte budget', (engine) => {
  let t: TestApp;
  let owner: Client;
  let anonymous: Client;
  let collectionId: string;

  beforeEach(async () => {
    // Sorting 20 MB of records by a field of their data reads all of it: on a loaded machine that
    // once passed the default statement budget (this file is about bytes, not time).
    t = await startTestApp(engine, { queryTimeMs: 30_000 });
    owner = await signedInOwner(t);
    anonymous = new Client(t);
    collectionId = (await owner.post('/v1/collections', { name: 'blobs', public: true })).body.id;
  });
  afterEach(async () => {
    await t.close();
  });

  /** Records of about `bytes` each, written straight to the table (an import would take as long). */
  async function insertRecords(count: number, bytes: number): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      const id = newId('rec');
      ids.push(id);
      const now = new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString();
      await t.deps.db.insertInto('records').values({
        id, workspace_id: owner.workspaceId!, collection_id: collectionId, data: writeJson({ i, blob: String(i % 10).repeat(bytes) }),
        schema_version: null, revision: 1, created_at: now, updated_at: now, trashed_at: null,
      }).execute();
    }
    return ids;
  }

  it('a page of 1 MB records asked with limit=1000 ends early under 16 MiB, and its cursors walk every record once', async () => {
    const ids = await insertRecords(40, MB);
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const url: string = `/v1/collections/${collectionId}/records?limit=1000${cursor ? `&cursor=${cursor}` : ''}`;
      // Anyone can ask this of a public collection: the bound holds for anonymous callers too.
      const reply = await anonymous.get(url);
      expect(reply.status).toBe(200);
      const answerBytes = Buffer.byteLength(JSON.stringify(reply.body));
      expect(answerBytes).toBeLessThanOrEqual(16 * MiB);
      const page = reply.body as { data: { id: string; data: { i: number; blob: string } }[]; nextCursor: string | null };
      // As many 1 MB records as fit in 16 MiB, and no fewer: 16 of them.
      if (page.nextCursor) expect(page.data.length).toBe(16);
      for (const record of page.data) expect(record.data.blob).toHaveLength(MB);
      seen.push(...page.data.map((record) => record.id));
      cursor = page.nextCursor;
      pages += 1;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual(ids);

    // The export reads in chunks of the same budget and still carries every record.
    const exported = await t.app.inject({
      method: 'GET',
      url: `/v1/collections/${collectionId}/export`,
      headers: { cookie: `plainbase_session=${owner.cookie}`, 'x-baas-workspace': owner.workspaceId! },
    });
    expect(exported.statusCode).toBe(200);
    expect(exported.body.split('\n').filter(Boolean).map((line) => JSON.parse(line).id)).toEqual(ids);
  }, 60_000);

  it('a record larger than the budget still makes a page of one, with a cursor past it', async () => {
    const app = await startTestApp(engine, { pageBytes: 256 * 1024 });
    try {
      const admin = await signedInOwner(app);
      await admin.post('/v1/collections', { name: 'big' });
      const made: string[] = [];
      for (const size of [300_000, 10, 200_000, 100_000]) {
        made.push((await admin.post('/v1/collections/big/records', { data: { blob: 'x'.repeat(size) } })).body.id);
      }
      const pages: string[][] = [];
      let cursor: string | null = null;
      do {
        const reply: { body: { data: { id: string }[]; nextCursor: string | null } } = await admin.get(`/v1/collections/big/records?limit=10${cursor ? `&cursor=${cursor}` : ''}`);
        pages.push(reply.body.data.map((record) => record.id));
        cursor = reply.body.nextCursor;
      } while (cursor);
      // 300 kB alone (over the 256 KiB budget, but a page holds one); then 10 B + 200 kB; then 100 kB.
      expect(pages).toEqual([[made[0]], [made[1], made[2]], [made[3]]]);
    } finally {
      await app.close();
    }
  });

  it('the trash, filters, sorts and fields follow the same budget', async () => {
    await insertRecords(20, MB);
    const budget = 16 * MiB;
    const sorted = await owner.get(`/v1/collections/${collectionId}/records?limit=1000&sort=-data.i&filter=${encodeURIComponent('data.i >= 0')}`);
    expect(sorted.status, JSON.stringify(sorted.body)).toBe(200);
    expect(sorted.body.data.map((record: { data: { i: number } }) => record.data.i)).toEqual([19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4]);
    expect(Buffer.byteLength(JSON.stringify(sorted.body))).toBeLessThanOrEqual(budget);
    // Asking for a small field only: every record fits.
    const slim = await owner.get(`/v1/collections/${collectionId}/records?limit=1000&fields=data.i`);
    expect(slim.body.data).toHaveLength(20);
    expect(slim.body.nextCursor).toBeNull();
    await sql`update records set trashed_at = ${new Date().toISOString()} where collection_id = ${collectionId}`.execute(t.deps.db);
    const trash = await owner.get(`/v1/collections/${collectionId}/records?limit=1000&trashed=true`);
    expect(trash.body.data).toHaveLength(16);
    expect(trash.body.nextCursor).not.toBeNull();
  }, 60_000);
});

describeEachEngine('reading rows one at a time', (engine) => {
  it('stops reading as soon as the visitor has enough: rows after the stop are never computed', async () => {
    const storage = await freshStorage(engine);
    try {
      // Row 6 fails when computed (an integer overflow on SQLite, a division by zero on
      // PostgreSQL): reading stops long before it, or the query fails.
      const query = engine === 'sqlite'
        ? CompiledQuery.raw(`with recursive n(i) as (select 1 union all select i + 1 from n where i < 10)
            select i, case when i = 6 then abs(-9223372036854775807 - 1) else i end as v from n`, [])
        : CompiledQuery.raw('select i, 1 / (6 - i) as v from generate_series(1, 10) as i', []);
      const seen: number[] = [];
      await visitRows<{ i: number }>(storage.db, query, { batchRows: 2, maxRows: 10 }, (row) => {
        seen.push(Number(row.i));
        return seen.length < 3;
      });
      expect(seen).toEqual([1, 2, 3]);
      // Read whole, the same query fails at row 6: the test above could only pass by stopping early.
      await expect(storage.db.executeQuery(query)).rejects.toThrow();
    } finally {
      await storage.close();
    }
  });
});

it('PLAINBASE_PAGE_BYTES: 16 MiB by default, at least 64 KiB', () => {
  expect(loadConfig({}).pageBytes).toBe(16 * MiB);
  expect(loadConfig({ PLAINBASE_PAGE_BYTES: '1048576' }).pageBytes).toBe(MiB);
  expect(() => loadConfig({ PLAINBASE_PAGE_BYTES: '1000' })).toThrow(/PLAINBASE_PAGE_BYTES: must be at least 65536/);
});
