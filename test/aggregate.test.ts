import { afterAll, beforeAll, expect, it } from 'vitest';
import { AppError } from '../src/errors.js';
import { Client, expectError, inNewWorkspace, KeyClient, signedInOwner } from './support/client.js';
import { describeEachEngine, startTestApp, type TestApp } from './support/harness.js';
import { expectPrototypesUntouched } from './support/untouched-prototypes.js';

/**
 * GET /v1/collections/{col}/aggregate on both engines, with the same expected answers written out
 * by hand. The records straddle the two clock changes of 2026 in Europe/Berlin (29 March, 02:00
 * CET → 03:00 CEST, at 01:00 UTC; 25 October, 03:00 CEST → 02:00 CET, at 01:00 UTC), so a local
 * day there holds a different set of records than the UTC day, and a night has two 02:00 hours.
 */
const RECORDS: { at: string; data: Record<string, unknown> }[] = [
  { at: '2026-03-28T22:30:00.000Z', data: { plan: 'pro', amount: 10 } }, //        Berlin 03-28 23:30 +01
  { at: '2026-03-28T23:30:00.000Z', data: { plan: 'free', amount: 0 } }, //        Berlin 03-29 00:30 +01
  { at: '2026-03-29T00:59:00.000Z', data: { plan: 'pro', amount: 5.5 } }, //       Berlin 03-29 01:59 +01
  { at: '2026-03-29T01:00:00.000Z', data: { plan: 'pro', amount: '7' } }, //       Berlin 03-29 03:00 +02
  { at: '2026-03-29T21:59:00.000Z', data: { plan: 1, amount: 1 } }, //             Berlin 03-29 23:59 +02
  { at: '2026-03-29T22:00:00.000Z', data: { plan: '1', amount: null } }, //        Berlin 03-30 00:00 +02
  { at: '2026-10-24T21:30:00.000Z', data: { plan: 'free' } }, //                   Berlin 10-24 23:30 +02
  { at: '2026-10-24T22:30:00.000Z', data: { plan: ['pro'], amount: 3 } }, //       Berlin 10-25 00:30 +02
  { at: '2026-10-25T00:30:00.000Z', data: { plan: 'pro', amount: -2 } }, //        Berlin 10-25 02:30 +02
  { at: '2026-10-25T01:30:00.000Z', data: { amount: 4 } }, //                      Berlin 10-25 02:30 +01
  { at: '2026-10-25T22:30:00.000Z', data: { plan: 'free', amount: true } }, //     Berlin 10-25 23:30 +01
  { at: '2026-10-25T23:30:00.000Z', data: { plan: 'pro', amount: 1e3 } }, //       Berlin 10-26 00:30 +01
];

describeEachEngine('aggregates', (engine) => {
  let t: TestApp;
  let owner: Client;
  let neighbour: Client;
  let anonymous: Client;
  let postsId: string;

  const aggregate = (client: Client, query: string, col = 'orders') => client.get(`/v1/collections/${col}/aggregate?${query}`);
  const ok = async (query: string, client: Client = owner, col = 'orders') => {
    const reply = await aggregate(client, query, col);
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    return reply.body;
  };
  const groups = async (query: string) => (await ok(query)).data.map((row: { group: Record<string, unknown>; count: number }) => [Object.values(row.group).join('|'), row.count]);

  beforeAll(async () => {
    t = await startTestApp(engine);
    owner = await signedInOwner(t);
    neighbour = await inNewWorkspace(t, owner, 'neighbour');
    anonymous = new Client(t);
    expect((await owner.post('/v1/collections', { name: 'orders' })).status).toBe(201);
    postsId = (await owner.post('/v1/collections', { name: 'posts', public: true })).body.id;
    expect((await neighbour.post('/v1/collections', { name: 'orders' })).status).toBe(201);
    for (const record of RECORDS) {
      t.clock.advance(Date.parse(record.at) - t.clock.now().getTime());
      expect((await owner.post('/v1/collections/orders/records', { data: record.data })).status).toBe(201);
    }
    // In the trash: left out, like a list leaves it out.
    const trashed = await owner.post('/v1/collections/orders/records', { data: { plan: 'pro', amount: 99999 } });
    expect((await owner.delete(`/v1/collections/orders/records/${trashed.body.id}`)).status).toBe(200);
    // The same name in another workspace, and another collection of this one: never counted.
    for (const amount of [500, 600]) {
      expect((await neighbour.post('/v1/collections/orders/records', { data: { plan: 'pro', amount } })).status).toBe(201);
      expect((await owner.post('/v1/collections/posts/records', { data: { plan: 'pro', amount } })).status).toBe(201);
    }
  });
  afterAll(async () => {
    await t?.close();
  });

  it('counts every live record without groupBy, and nothing of other collections or workspaces', async () => {
    expect(await ok('')).toEqual({ data: [{ group: {}, count: 12 }], nextCursor: null, skipped: {} });
    expect((await ok('metrics=sum:data.amount', neighbour)).data).toEqual([{ group: {}, count: 2, sum: { 'data.amount': 1100 } }]);
    expect((await ok('filter=data.amount%20%3E%20100')).data).toEqual([{ group: {}, count: 1 }]);
  });

  it('groups by a data field type-strictly, computes every metric over numbers only and counts what it skipped', async () => {
    const metrics = 'count,sum:data.amount,avg:data.amount,min:data.amount,max:data.amount,countDistinct:data.amount';
    const answer = await ok(`groupBy=data.plan&metrics=${metrics}`);
    const m = (sum: number | null, avg: number | null, min: number | null, max: number | null, distinct: number) =>
      ({ sum: { 'data.amount': sum }, avg: { 'data.amount': avg }, min: { 'data.amount': min }, max: { 'data.amount': max }, countDistinct: { 'data.amount': distinct } });
    expect(answer).toEqual({
      data: [
        // null and missing first, then numbers, then strings by code point; the array plan is skipped.
        { group: { 'data.plan': null }, count: 1, ...m(4, 4, 4, 4, 1) },
        { group: { 'data.plan': 1 }, count: 1, ...m(1, 1, 1, 1, 1) },
        { group: { 'data.plan': '1' }, count: 1, ...m(null, null, null, null, 0) },
        { group: { 'data.plan': 'free' }, count: 3, ...m(0, 0, 0, 0, 2) },
        { group: { 'data.plan': 'pro' }, count: 5, ...m(1013.5, 253.375, -2, 1000, 5) },
      ],
      nextCursor: null,
      // "7" and true are not numbers; the record whose plan is an array is in no group.
      skipped: { 'data.amount': 2, 'data.plan': 1 },
    });
  });

  it('sorts by a metric or a group key, either way, and pages by cursor to the end', async () => {
    expect(await groups('groupBy=data.plan&sort=-count')).toEqual([['pro', 5], ['free', 3], ['', 1], ['1', 1], ['1', 1]]);
    expect((await ok('groupBy=data.plan&sort=-data.plan')).data.map((row: any) => row.group['data.plan'])).toEqual(['pro', 'free', '1', 1, null]);
    expect((await ok('groupBy=data.plan&metrics=max:data.amount&sort=-max:data.amount')).data.map((row: any) => row.max['data.amount'])).toEqual([1000, 4, 1, 0, null]);

    const pages: unknown[][] = [];
    let cursor: string | null = null;
    do {
      const page: any = await ok(`groupBy=data.plan&metrics=sum:data.amount&sort=-count&limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      pages.push(page.data.map((row: any) => row.group['data.plan']));
      // The whole aggregate's skipped on every page.
      expect(page.skipped).toEqual({ 'data.amount': 2, 'data.plan': 1 });
      cursor = page.nextCursor;
    } while (cursor);
    expect(pages).toEqual([['pro', 'free'], [null, 1], ['1']]);

    // A cursor belongs to its request: another sort, filter or tz refuses it.
    const first = await ok('groupBy=data.plan&sort=-count&limit=2');
    for (const other of ['groupBy=data.plan&sort=count', 'groupBy=data.plan&sort=-count&filter=data.plan%20%3D%201', 'groupBy=data.plan&sort=-count&tz=Europe/Berlin']) {
      expect(expectError(await aggregate(owner, `${other}&limit=2&cursor=${first.nextCursor}`), 400, 'INVALID_REQUEST').details?.field).toBe('querystring.cursor');
    }
  });

  it('buckets times by local day, week, month and hour in the zone, through both clock changes', async () => {
    expect(await groups('groupBy=createdAt:day')).toEqual([['2026-03-28', 2], ['2026-03-29', 4], ['2026-10-24', 2], ['2026-10-25', 4]]);
    expect(await groups('groupBy=createdAt:day&tz=Europe/Berlin')).toEqual([
      ['2026-03-28', 1], ['2026-03-29', 4], ['2026-03-30', 1], ['2026-10-24', 1], ['2026-10-25', 4], ['2026-10-26', 1],
    ]);
    expect(await groups('groupBy=createdAt:week&tz=Europe/Berlin')).toEqual([['2026-03-23', 5], ['2026-03-30', 1], ['2026-10-19', 5], ['2026-10-26', 1]]);
    expect(await groups('groupBy=createdAt:week')).toEqual([['2026-03-23', 6], ['2026-10-19', 6]]);
    expect(await groups('groupBy=updatedAt:month&tz=Europe/Berlin')).toEqual([['2026-03', 6], ['2026-10', 6]]);
    // The night the clocks go back has two 02:00 hours, told apart by their offsets.
    const autumn = encodeURIComponent('createdAt >= "2026-10-25T00:00" && createdAt < "2026-10-25T02:00"');
    expect(await groups(`groupBy=createdAt:hour&tz=Europe/Berlin&filter=${autumn}`)).toEqual([['2026-10-25T02:00+01:00', 1], ['2026-10-25T02:00+02:00', 1]]);
    // The night they go forward has no 02:00 hour: 01:59 and, a minute later, 03:00.
    const spring = encodeURIComponent('createdAt >= "2026-03-29T00:00" && createdAt < "2026-03-29T02:00"');
    expect(await groups(`groupBy=createdAt:hour&tz=Europe/Berlin&filter=${spring}`)).toEqual([['2026-03-29T01:00+01:00', 1], ['2026-03-29T03:00+02:00', 1]]);
    // Half-hour offsets: 06:29 and 06:30 in Kolkata are one hour, and the day starts at 18:30 UTC.
    expect(await groups(`groupBy=createdAt:hour&tz=Asia/Kolkata&filter=${spring}`)).toEqual([['2026-03-29T06:00+05:30', 2]]);
    expect(await groups(`groupBy=createdAt:day&tz=Asia/Kolkata&filter=${encodeURIComponent('createdAt < "2026-04"')}`)).toEqual([['2026-03-29', 4], ['2026-03-30', 2]]);
    // Two keys: a field and a bucket.
    const both = await ok(`groupBy=data.plan,createdAt:month&tz=Europe/Berlin&filter=${encodeURIComponent('data.plan = "pro"')}&metrics=sum:data.amount`);
    expect(both.data).toEqual([
      { group: { 'data.plan': 'pro', 'createdAt:month': '2026-03' }, count: 3, sum: { 'data.amount': 15.5 } },
      { group: { 'data.plan': 'pro', 'createdAt:month': '2026-10' }, count: 2, sum: { 'data.amount': 998 } },
    ]);
    expect(both.skipped).toEqual({ 'data.amount': 1, 'data.plan': 0 });
  });

  it('reads like a list: public collections for anyone, restricted keys their collections only, write-only keys not at all', async () => {
    expect((await ok('metrics=sum:data.amount', anonymous, postsId)).data).toEqual([{ group: {}, count: 2, sum: { 'data.amount': 1100 } }]);
    expectError(await aggregate(anonymous, ''), 400, 'INVALID_REQUEST');
    const ordersId = (await owner.get('/v1/collections/orders')).body.id;
    expectError(await aggregate(anonymous, '', ordersId), 401, 'UNAUTHENTICATED');

    const restricted = await owner.post('/v1/keys', { name: 'posts reader', scopes: ['records:read'], collections: ['posts'] });
    const reader = new KeyClient(t, restricted.body.secret);
    expect((await ok('', reader, 'posts')).data).toEqual([{ group: {}, count: 2 }]);
    expectError(await aggregate(reader, ''), 403, 'COLLECTION_NOT_ALLOWED');

    const writeOnly = await owner.post('/v1/keys', { name: 'writer', scopes: ['records:create'] });
    expectError(await aggregate(new KeyClient(t, writeOnly.body.secret), ''), 403, 'MISSING_SCOPE');
  });

  it('refuses hostile or mistaken input with 400 naming the parameter, never 500', async () => {
    const cases: [string, string][] = [
      ['groupBy=data.a,data.b,data.c,data.d', 'groupBy'],
      ['groupBy=data.a,data.a', 'groupBy'],
      ['groupBy=__proto__', 'groupBy'],
      ['groupBy=constructor', 'groupBy'],
      ['groupBy=createdAt', 'groupBy'],
      ['groupBy=createdAt:year', 'groupBy'],
      ['groupBy=createdAt:day:x', 'groupBy'],
      ['groupBy=data.a:day', 'groupBy'],
      ['groupBy=id', 'groupBy'],
      ['groupBy=data.a,,data.b', 'groupBy'],
      [`groupBy=data.${'a.'.repeat(20)}b`, 'groupBy'],
      ['metrics=__proto__', 'metrics'],
      ['metrics=median:data.a', 'metrics'],
      ['metrics=sum:createdAt', 'metrics'],
      ['metrics=sum:__proto__', 'metrics'],
      ['metrics=sum:data.a,sum:data.a', 'metrics'],
      [`metrics=${Array.from({ length: 21 }, (_, i) => `sum:data.f${i}`).join(',')}`, 'metrics'],
      ['sort=data.a', 'sort'],
      ['sort=__proto__', 'sort'],
      ['groupBy=data.a&sort=data.a,-data.a', 'sort'],
      ['sort=sum:data.a', 'sort'],
      ['tz=Mars/Olympus', 'tz'],
      ['tz=__proto__', 'tz'],
      ['tz=%2B01:00', 'tz'],
      ['tz=', 'tz'],
      ['tz=EST%2B5', 'tz'],
      ['tz=-05:00', 'tz'],
      ['limit=1001', 'limit'],
      ['limit=99999999999999999999', 'limit'],
      ['limit=0', 'limit'],
      ['cursor=junk!', 'cursor'],
      [`cursor=${Buffer.from('{"a":"x","o":1}').toString('base64url')}`, 'cursor'],
      ['filter=data.a%20%3D', 'filter'],
      ['filter=data.a%20~*%201', 'filter'],
      ['having=1', 'having'],
    ];
    for (const [query, parameter] of cases) {
      const reply = await aggregate(owner, query);
      const error = expectError(reply, 400, 'INVALID_REQUEST');
      expect(error.details?.field, query).toBe(`querystring.${parameter}`);
    }
    // Prototype-named paths are ordinary fields: grouped and summed as written, Object.prototype untouched.
    expect((await owner.post('/v1/collections/orders/records', { data: { __proto__x: 1, constructor: 'c', toString: 5 } })).status).toBe(201);
    const odd = await ok('groupBy=data.__proto__,data.constructor&metrics=sum:data.toString,countDistinct:data.hasOwnProperty&filter=data.constructor%20%3D%20%22c%22');
    expect(odd.data).toEqual([{ group: { 'data.__proto__': null, 'data.constructor': 'c' }, count: 1, sum: { 'data.toString': 5 }, countDistinct: { 'data.hasOwnProperty': 0 } }]);
    expectPrototypesUntouched();
    expect((await owner.delete(`/v1/collections/orders/records/${(await owner.get(`/v1/collections/orders/records?filter=${encodeURIComponent('data.constructor = "c"')}`)).body.data[0].id}`)).status).toBe(200);
  });

  // A zone the runtime knows and PostgreSQL does not cannot be named today (every IANA name of
  // Node.js 22 is in PostgreSQL 15's list): the statement itself is made to name one.
  (engine === 'postgres' ? it : it.skip)('answers 400 naming tz, not 500, when the database does not know a zone', async () => {
    const bucket = t.deps.dialect.timeBucket('created_at', 'day', 'Nowhere/Atlantis');
    const failed = await t.deps.db.selectFrom('records').select(bucket.as('day')).execute().then(() => null, (error: unknown) => error);
    expect(failed).toBeInstanceOf(AppError);
    expect(failed).toMatchObject({ code: 'INVALID_REQUEST', details: { field: 'querystring.tz' } });
  });

  it('runs under the caller\'s time budget and answers 400 naming it when the grouping takes longer', async () => {
    const lines = Array.from({ length: 3000 }, (_, i) => JSON.stringify({ text: `${'lorem ipsum '.repeat(20)}${i}`, n: i % 7 })).join('\n');
    expect((await owner.post('/v1/collections', { name: 'big' })).status).toBe(201);
    expect((await owner.call('POST', '/v1/collections/big/import', lines, { 'content-type': 'application/x-ndjson' })).status).toBe(200);
    const slow = encodeURIComponent(Array.from({ length: 12 }, (_, i) => `data.text ~* "zz${i}"`).join(' || ') + ' || data.n >= 0');
    const before = t.deps.config.queryTimeMs;
    t.deps.config.queryTimeMs = 1;
    try {
      const error = expectError(await aggregate(owner, `groupBy=data.n&filter=${slow}`, 'big'), 400, 'INVALID_REQUEST');
      expect(error.details).toEqual({ limit: 1, setting: 'PLAINBASE_QUERY_TIME_MS' });
    } finally {
      t.deps.config.queryTimeMs = before;
    }
    const answer = await ok(`groupBy=data.n&filter=${slow}&sort=-count&limit=1`, owner, 'big');
    expect(answer.data).toEqual([{ group: { 'data.n': 0 }, count: 429 }]);
  });
});
