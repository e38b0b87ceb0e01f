import { afterEach, beforeEach, expect, it } from 'vitest';
import { Client, expectError, inNewWorkspace, signedInOwner, type Reply } from './support/client.js';
import { describeEachEngine, startTestApp, type TestApp } from './support/harness.js';

/**
 * Collections (and their trash), files and keys take `sort=createdAt` (the default, as before)
 * or `sort=-createdAt` (newest first, what the dashboard asks for); the cursor pages correctly in
 * either order, and each workspace sees only its own.
 */
describeEachEngine('lists in creation order, either way', (engine) => {
  let t: TestApp;
  let owner: Client;
  let neighbour: Client;
  beforeEach(async () => {
    t = await startTestApp(engine);
    owner = await signedInOwner(t);
    neighbour = await inNewWorkspace(t, owner, 'Neighbour');
  });
  afterEach(async () => { await t?.close(); });

  /** Every item of `url`, `limit` at a time, page by page. */
  async function pages(client: Client, url: string, limit: number): Promise<string[][]> {
    const all: string[][] = [];
    let cursor: string | null = null;
    do {
      const reply: Reply = await client.get(`${url}${url.includes('?') ? '&' : '?'}limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`);
      expect(reply.status, `${url} ${JSON.stringify(reply.body)}`).toBe(200);
      expect(reply.body.data.length).toBeLessThanOrEqual(limit);
      all.push(reply.body.data.map((item: { name: string }) => item.name));
      cursor = reply.body.nextCursor;
    } while (cursor);
    return all;
  }

  /** Makes five things, a millisecond apart, in both workspaces; answers the owner's names in creation order. */
  async function makeFive(make: (client: Client, name: string) => Promise<void>): Promise<string[]> {
    const names: string[] = [];
    for (let i = 1; i <= 5; i += 1) {
      await make(owner, `a${i}`);
      await make(neighbour, `b${i}`);
      names.push(`a${i}`);
      t.clock.advance(1);
    }
    return names;
  }

  const inPairs = (items: string[]) => Array.from({ length: Math.ceil(items.length / 2) }, (_, i) => items.slice(i * 2, i * 2 + 2));

  async function expectBothOrders(url: string, names: string[], neighbourUrl = url): Promise<void> {
    expect((await pages(owner, url, 2)).flat()).toEqual(names);
    expect(await pages(owner, `${url}${url.includes('?') ? '&' : '?'}sort=createdAt`, 2)).toEqual(inPairs(names));
    const newest = [...names].reverse();
    expect(await pages(owner, `${url}${url.includes('?') ? '&' : '?'}sort=-createdAt`, 2)).toEqual(inPairs(newest));
    expect(await pages(owner, `${url}${url.includes('?') ? '&' : '?'}sort=-createdAt`, 5)).toEqual([newest]);
    // The other workspace's list holds only its own things, in its own order.
    const theirs = (await pages(neighbour, `${neighbourUrl}${neighbourUrl.includes('?') ? '&' : '?'}sort=-createdAt`, 3)).flat();
    expect(theirs.every((name) => name.startsWith('b'))).toBe(true);
    expect(theirs).toEqual([...theirs].sort().reverse());
  }

  it('collections and the trash', async () => {
    const names = await makeFive(async (client, name) => {
      expect((await client.post('/v1/collections', { name })).status).toBe(201);
    });
    await expectBothOrders('/v1/collections', names);
    for (const client of [owner, neighbour]) {
      for (const name of ['2', '3', '5']) expect((await client.delete(`/v1/collections/${client === owner ? 'a' : 'b'}${name}`)).status).toBe(200);
    }
    await expectBothOrders('/v1/collections?trashed=true', ['a2', 'a3', 'a5']);
    expect((await pages(owner, '/v1/collections?sort=-createdAt', 10)).flat()).toEqual(['a4', 'a1']);
  });

  it('files of a collection', async () => {
    for (const client of [owner, neighbour]) expect((await client.post('/v1/collections', { name: 'docs' })).status).toBe(201);
    const names = await makeFive(async (client, name) => {
      const reply = await t.app.inject({
        method: 'POST',
        url: `/v1/collections/docs/files?name=${name}`,
        headers: { cookie: `plainbase_session=${client.cookie}`, 'x-baas-workspace': client.workspaceId!, 'content-type': 'text/plain' },
        payload: `content of ${name}`,
      });
      expect(reply.statusCode, reply.body).toBe(201);
    });
    await expectBothOrders('/v1/collections/docs/files', names);
  });

  it('keys', async () => {
    const names = await makeFive(async (client, name) => {
      expect((await client.post('/v1/keys', { name, scopes: ['records:read'] })).status).toBe(201);
    });
    await expectBothOrders('/v1/keys', names);
  });

  it('refuses any other sort on these lists', async () => {
    for (const url of ['/v1/collections', '/v1/keys']) {
      for (const sort of ['name', '-name', 'createdAt,name', '', 'CREATEDAT', '-createdAt%00']) {
        expect(expectError(await owner.get(`${url}?sort=${sort}`), 400, 'INVALID_REQUEST').details?.field, `${url} ${sort}`).toBe('querystring.sort');
      }
    }
  });
});
