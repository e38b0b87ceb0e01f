import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { closeSender } from '../src/delivery/guard-options.js';
import { newId } from '../src/ids.js';
import { DeliveryWorker } from '../src/worker/delivery-worker.js';
import { Client, OWNER, signedInOwner } from './support/client.js';
import { describeEachEngine, startTestApp, type TestApp } from './support/harness.js';
import { Receiver } from './support/receiver.js';

/**
 * Every list answer is bounded in bytes (PLAINBASE_PAGE_BYTES), not only records: the lists are
 * found in the OpenAPI document (every GET whose 200 answer is `{data, nextCursor}`), so a list
 * added later without the budget fails here. Each list is filled past a 2 KiB budget with large
 * names, settings, schemas, URLs and data, then walked with limit=1000: every page stays within
 * the budget (a page of one may pass it), and the pages together are exactly the list read in
 * one page under a large budget, in order, with no gap and no repeat.
 */

const BUDGET = 2048;
const LARGE = 16 * 1024 * 1024;
const NEIGHBOUR_MARK = 'neighbourmark';

/** Lists that cannot be filled here, each with its reason. Empty: every list is walked. */
const NOT_FILLED: Record<string, string> = {};

/** Each list of the document, as the addresses to walk (a list with a variant, like the trash, has two). */
type Fill = (world: World) => string[];

interface World {
  collection: string;
  webhookId: string;
  /** A live record of the collection changed several times: its history is a list too. */
  recordId: string;
}

const long = (label: string, length: number) => `${label} ${'x'.repeat(length - label.length - 1)}`;

const FILLED: Record<string, Fill> = {
  '/v1/workspaces': () => ['/v1/workspaces'],
  '/v1/members': () => ['/v1/members'],
  '/v1/invites': () => ['/v1/invites'],
  '/v1/audit-log': () => ['/v1/audit-log'],
  '/v1/keys': () => ['/v1/keys'],
  '/v1/service-accounts': () => ['/v1/service-accounts'],
  '/v1/collections': () => ['/v1/collections', '/v1/collections?trashed=true'],
  '/v1/collections/{col}/records/{rec}/versions': (w) => [`/v1/collections/${w.collection}/records/${w.recordId}/versions`],
  '/v1/collections/{col}/records': (w) => [`/v1/collections/${w.collection}/records`, `/v1/collections/${w.collection}/records?trashed=true`],
  '/v1/collections/{col}/indexes': (w) => [`/v1/collections/${w.collection}/indexes`],
  '/v1/collections/{col}/schemas': (w) => [`/v1/collections/${w.collection}/schemas`],
  '/v1/collections/{col}/files': (w) => [`/v1/collections/${w.collection}/files`],
  '/v1/webhooks': () => ['/v1/webhooks'],
  '/v1/auth/sessions': () => ['/v1/auth/sessions'],
  '/v1/webhooks/{wh}/deliveries': (w) => [`/v1/webhooks/${w.webhookId}/deliveries`],
  '/v1/events': () => ['/v1/events'],
  // Archives put on the shelf by hand in beforeAll (their names are all a listing shows of them).
  '/v1/backups': () => ['/v1/backups'],
  // Groups made long by their texts and by metrics on long field names (null: no such field).
  '/v1/collections/{col}/aggregate': (w) => [`/v1/collections/${w.collection}/aggregate?groupBy=data.text&metrics=${[1, 2, 3, 4, 5, 6, 7, 8].map((k) => `sum:data.${'x'.repeat(60)}${k}`).join(',')}`],
};

describeEachEngine('every list page is bounded in bytes', (engine) => {
  let t: TestApp;
  let owner: Client;
  let neighbour: Client;
  let receiver: Receiver;
  let world: World;

  beforeAll(async () => {
    t = await startTestApp(engine, { pageBytes: BUDGET, env: 'development', webhookAllowPrivate: true });
    owner = await signedInOwner(t);
    receiver = new Receiver();
    const url = await receiver.start();
    const ok = async (reply: Promise<{ status: number; body: any }>, status = 201) => {
      const { status: got, body } = await reply;
      expect(got, JSON.stringify(body)).toBe(status);
      return body;
    };
    // A neighbour workspace filled alike: none of its things may show in the owner's lists.
    neighbour = new Client(t);
    neighbour.cookie = owner.cookie;
    neighbour.workspaceId = (await ok(owner.post('/v1/workspaces', { name: 'Neighbour' }))).id;
    for (const client of [owner, neighbour]) {
      // Every name, URL and value of the neighbour's carries its mark, to be looked for in the owner's lists.
      const mark = client === owner ? 'owner' : NEIGHBOUR_MARK;
      // The neighbour needs only a few of each to show it never leaks (its collections and records fill its own pages below).
      const few = (count: number) => (client === owner ? count : 2);
      const webhook = await ok(client.post('/v1/webhooks', { url: `${url}?pad=${mark}${'p'.repeat(300)}`, events: ['*'] }));
      for (let i = 0; i < few(4); i++) await ok(client.post('/v1/webhooks', { url: `${url}?n=${i}&pad=${mark}${'q'.repeat(400)}`, events: ['schema.updated'] }));
      for (let i = 0; i < 12; i++) await ok(client.post('/v1/collections', { name: i === 0 ? 'big' : `c${i}`, settings: { description: long(`${mark} collection ${i}`, 350) } }));
      for (const i of [7, 8, 9, 10, 11]) await ok(client.delete(`/v1/collections/c${i}`), 200);
      const records: string[] = [];
      for (let i = 0; i < 10; i++) records.push((await ok(client.post('/v1/collections/big/records', { data: { i, text: long(`${mark} record ${i}`, 250) } }))).id);
      for (const id of records.slice(0, 4)) await ok(client.delete(`/v1/collections/big/records/${id}`), 200);
      for (let v = 0; v < few(6); v++) await ok(client.patch(`/v1/collections/big/records/${records[5]}`, { data: { i: 5, text: long(`${mark} version ${v}`, 300) } }), 200);
      if (client === owner) world = { collection: 'big', webhookId: webhook.id, recordId: records[5]! };
      for (let i = 0; i < few(5); i++) {
        const fields = [1, 2, 3, 4].map((f) => `data.${'f'.repeat(60)}.${'g'.repeat(60)}${i}${f}`);
        await ok(client.post('/v1/collections/big/indexes', { name: `index_${i}_${'n'.repeat(50)}`, fields }));
      }
      for (let i = 0; i < few(5); i++) await ok(client.post('/v1/collections/big/schemas', { schema: { type: 'object', description: long(`${mark} schema ${i}`, 450) } }));
      for (let i = 0; i < few(10); i++) await ok(client.post(`/v1/collections/big/files?name=${long(`${mark}-file${i}`, 200).replaceAll(' ', '-')}`, `content ${i}`, { 'content-type': 'text/plain' }));
      for (let i = 0; i < few(8); i++) await ok(client.post('/v1/keys', { name: long(`${mark} key ${i}`, 200), scopes: ['records:read'] }));
      for (let i = 0; i < few(10); i++) await ok(client.post('/v1/service-accounts', { name: long(`${mark} account ${i}`, 200), role: 'viewer' }));
      for (let i = 0; i < few(14); i++) await ok(client.post('/v1/invites', { email: `${'i'.repeat(60)}${i}@${mark}.example.com`, role: 'viewer' }));
      // Members, written straight to the tables: signing ten people up would only add hashing time.
      const now = t.clock.now().toISOString();
      for (let i = 0; i < few(10); i++) {
        const personId = newId('per');
        await t.deps.db.insertInto('people').values({ id: personId, email: `${personId}@example.com`, name: long(`${mark} person ${i}`, 200), password_hash: 'not a hash', created_at: now }).execute();
        await t.deps.db.insertInto('memberships').values({ workspace_id: client.workspaceId!, person_id: personId, role: 'viewer', joined_at: now }).execute();
      }
    }
    for (let i = 0; i < 12; i++) await ok(owner.post('/v1/workspaces', { name: long(`workspace ${i}`, 200) }));
    // The owner's sessions: signed in again and again from a browser with a long User-Agent.
    for (let i = 0; i < 10; i++) {
      const signedIn = await t.app.inject({ method: 'POST', url: '/v1/auth/sign-in', headers: { 'user-agent': long(`browser ${i}`, 500) }, payload: { email: OWNER.email, password: OWNER.password } });
      expect(signedIn.statusCode, signedIn.body).toBe(200);
    }
    // Backups are listed from the shelf: 60 empty archives there fill many pages of the budget.
    const shelf = path.join(t.deps.config.dataDir, 'backups');
    fs.mkdirSync(shelf, { recursive: true });
    for (let n = 0; n < 60; n++) fs.writeFileSync(path.join(shelf, `plainbase-2026-01-01T00-${String(n).padStart(2, '0')}-00-000Z.tar`), '');
    // Events reach the feed, and deliveries the log, once the worker has fanned them out.
    await new DeliveryWorker(t.deps).drain();
  }, 60_000);

  afterAll(async () => {
    await receiver?.stop();
    if (t) await closeSender(t.deps);
    await t?.close();
  });

  /** The list at `url` read once with a large budget: what the pages must add up to. */
  async function wholeList(url: string): Promise<unknown[]> {
    const config = t.deps.config;
    t.deps.config = { ...config, pageBytes: LARGE };
    try {
      const reply = await owner.get(`${url}${url.includes('?') ? '&' : '?'}limit=1000`);
      expect(reply.status, url).toBe(200);
      expect(reply.body.nextCursor, `${url} fits one page under a large budget`).toBeNull();
      return reply.body.data;
    } finally {
      t.deps.config = config;
    }
  }

  it('finds every list in the document, fills it past the budget, and walks it page by page', async () => {
    const document = JSON.parse((await t.app.inject({ method: 'GET', url: '/v1/openapi.json' })).body);
    const lists = Object.entries<any>(document.paths)
      .filter(([, item]) => {
        const properties = item.get?.responses?.['200']?.content?.['application/json']?.schema?.properties;
        return properties?.data?.type === 'array' && 'nextCursor' in properties;
      })
      .map(([path]) => path);
    // The walk below must have found the lists, not an empty document.
    expect(lists.length).toBeGreaterThanOrEqual(Object.keys(FILLED).length);
    const unfilled = lists.filter((path) => !FILLED[path] && !NOT_FILLED[path]);
    expect(unfilled, 'a new list route: fill it in FILLED (or name it in NOT_FILLED, with the reason)').toEqual([]);

    for (const path of lists.filter((listed) => FILLED[listed])) {
      for (const url of FILLED[path]!(world)) {
        const whole = await wholeList(url);
        const pages: unknown[][] = [];
        let cursor: string | null = null;
        do {
          const address: string = `${url}${url.includes('?') ? '&' : '?'}limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
          const reply = await t.app.inject({
            method: 'GET',
            url: address,
            headers: { cookie: `plainbase_session=${owner.cookie}`, 'x-baas-workspace': owner.workspaceId! },
          });
          expect(reply.statusCode, `${address}: ${reply.body.slice(0, 300)}`).toBe(200);
          const body = reply.json() as { data: unknown[]; nextCursor: string | null };
          expect(body.data.length, `${address} answered an empty page with a cursor`).toBeGreaterThan(0);
          // Within the budget; a page of one may pass it (a list can always be walked to its end).
          if (body.data.length > 1) expect(Buffer.byteLength(reply.body), `${address} (${body.data.length} items)`).toBeLessThanOrEqual(BUDGET);
          pages.push(body.data);
          cursor = body.nextCursor;
          expect(pages.length, `${url} does not end`).toBeLessThan(200);
        } while (cursor);
        // Filled past the budget: the walk took several pages, and they are the whole list, in order.
        expect(pages.length, `${url} was not filled past the budget (${whole.length} items)`).toBeGreaterThanOrEqual(3);
        expect(pages.flat(), url).toEqual(whole);
        // The owner belongs to both workspaces, so only its list of workspaces may name the other.
        if (url !== '/v1/workspaces') expect(JSON.stringify(whole), `${url} shows the neighbour's`).not.toContain(NEIGHBOUR_MARK);
      }
    }
  }, 60_000);

  it('the neighbour workspace, filled alike, pages its own lists within the budget too', async () => {
    for (const url of ['/v1/collections', '/v1/events', '/v1/audit-log']) {
      const first = await neighbour.get(`${url}?limit=1000`);
      expect(first.status).toBe(200);
      expect(first.body.nextCursor, url).not.toBeNull();
      expect(Buffer.byteLength(JSON.stringify(first.body)), url).toBeLessThanOrEqual(BUDGET);
      expect(JSON.stringify(first.body), url).not.toContain('owner collection');
    }
  });
});
