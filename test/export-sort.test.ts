import { afterAll, beforeAll, expect, it } from 'vitest';
import { Client, expectError, inNewWorkspace, signedInOwner } from './support/client.js';
import { describeEachEngine, startTestApp, type TestApp } from './support/harness.js';

/** An export in the order of `sort`, as the record list sorts (docs/import-export.md). */
describeEachEngine('sorted exports', (engine) => {
  let t: TestApp;
  let owner: Client;
  let other: Client;
  const COUNT = 150;

  beforeAll(async () => {
    // The smallest page budget: the records below (about 1 KB each) make several chunks, so the
    // export pages by its keyset several times.
    t = await startTestApp(engine, { pageBytes: 64 * 1024 });
    owner = await signedInOwner(t);
    other = await inNewWorkspace(t, owner, 'Second');
    for (const client of [owner, other]) expect((await client.post('/v1/collections', { name: 'sales' })).status).toBe(201);
    const lines = Array.from({ length: COUNT }, (_, i) => {
      // Amounts repeat (ties broken by id), some are text or missing: the list's type order applies.
      const amount = i % 10 === 0 ? `t${i % 3}` : i % 15 === 0 ? undefined : (i * 37) % 23;
      return JSON.stringify({ amount, region: ['north', 'south', 'east'][i % 3], pad: 'x'.repeat(1000) });
    });
    expect((await owner.call('POST', '/v1/collections/sales/import', lines.join('\n'), { 'content-type': 'application/x-ndjson' })).body.imported).toBe(COUNT);
    expect((await other.call('POST', '/v1/collections/sales/import', lines.slice(0, 5).join('\n'), { 'content-type': 'application/x-ndjson' })).body.imported).toBe(5);
  });
  afterAll(async () => t?.close());

  /** The ids the record list gives for the same filter and sort, every page. */
  async function listedIds(query: string): Promise<string[]> {
    const ids: string[] = [];
    let cursor: string | null = null;
    do {
      const page: any = await owner.get(`/v1/collections/sales/records?limit=40&${query}${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.status).toBe(200);
      ids.push(...page.body.data.map((record: any) => record.id));
      cursor = page.body.nextCursor;
    } while (cursor);
    return ids;
  }

  /** The export's text as sent (the client would parse NDJSON as one JSON value). */
  async function exported(client: Client, query: string): Promise<string> {
    const response = await t.app.inject({ method: 'GET', url: `/v1/collections/sales/export?${query}`, headers: { cookie: `plainbase_session=${client.cookie}`, 'x-baas-workspace': client.workspaceId! } });
    expect(response.statusCode, response.body.slice(0, 300)).toBe(200);
    return response.body;
  }
  const ndjsonIds = (text: string) => text.trim().split('\n').map((line) => JSON.parse(line).id as string);
  const csvIds = (text: string) => text.trim().split('\r\n').slice(1).map((line) => line.split(',')[0]!);

  for (const sort of ['-data.amount', 'data.region,-data.amount', '-createdAt', 'data.missing,-id']) {
    it(`exports in the list's order for sort=${sort}, NDJSON and CSV alike`, async () => {
      for (const filter of ['', 'data.region != "east"']) {
        const query = `sort=${encodeURIComponent(sort)}${filter ? `&filter=${encodeURIComponent(filter)}` : ''}`;
        const expected = await listedIds(query);
        expect(expected.length).toBe(filter ? 100 : COUNT);
        expect(ndjsonIds(await exported(owner, query))).toEqual(expected);
        expect(csvIds(await exported(owner, `format=csv&fields=data.amount,data.region&${query}`))).toEqual(expected);
      }
    });
  }

  it('keeps the default order (oldest first) and the other workspace apart', async () => {
    const ids = ndjsonIds(await exported(owner, ''));
    expect(ids).toEqual(await listedIds(''));
    expect(ids).toEqual([...ids].sort());
    expect(ndjsonIds(await exported(owner, 'sort='))).toEqual(ids);
    const theirs = ndjsonIds(await exported(other, 'sort=-data.amount'));
    expect(theirs).toHaveLength(5);
    expect(theirs.some((id) => ids.includes(id))).toBe(false);
  });

  it('refuses a bad sort with 400 before the first byte', async () => {
    for (const sort of ['data.', 'nope', '-data.a,-data.a', 'a,b,c,d,e', 'x'.repeat(600)]) {
      expectError(await owner.get(`/v1/collections/sales/export?sort=${encodeURIComponent(sort)}`), 400, 'INVALID_REQUEST');
      expectError(await owner.get(`/v1/collections/sales/export?format=csv&sort=${encodeURIComponent(sort)}`), 400, 'INVALID_REQUEST');
    }
  });
});
