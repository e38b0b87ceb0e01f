import fc from 'fast-check';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { KeyClient, signedInOwner, type Client } from './support/client.js';
import { startTestApp, type TestApp } from './support/harness.js';

/**
 * SQLite and PostgreSQL give the same aggregate, page by page, for random records and random
 * requests: group keys of every JSON type (strings differing in case and accents, numbers, 1 and
 * "1", booleans, null, missing, arrays), metrics over numbers mixed with other types, filters with
 * ~* and !~*, every time bucket in zones with clock changes and half-hour or 45-minute offsets,
 * with records placed around the clock changes of 2026. Numbers are whole or halves, so that sums
 * are exact in any order of addition. Each run's records go into a new collection on both engines.
 */
const RUNS = 30;
const SEED = 20261129;

const ZONES = ['UTC', 'Europe/Berlin', 'America/New_York', 'Asia/Kolkata', 'Australia/Lord_Howe', 'Pacific/Chatham'];
/** Starting points around clock changes: Europe (spring, autumn), the US (autumn), Lord Howe and Chatham (April). */
const STARTS = ['2026-03-28T20:00:00.000Z', '2026-10-24T20:00:00.000Z', '2026-11-01T03:00:00.000Z', '2026-04-04T12:00:00.000Z', '2026-12-31T20:00:00.000Z'];

const scalar = fc.oneof(fc.constantFrom('pro', 'Pro', 'PRO', 'free', 'é', 'É', '1', '', '50%_x'), fc.integer({ min: -3, max: 3 }), fc.boolean(), fc.constant(null));
const groupValue = fc.oneof({ weight: 6, arbitrary: scalar }, { weight: 1, arbitrary: fc.constant(['pro']) });
const amount = fc.oneof({ weight: 6, arbitrary: fc.integer({ min: -2000, max: 2000 }).map((n) => n / 2) }, { weight: 1, arbitrary: fc.constantFrom('5', true, null, [1], { n: 1 }) });
const record = fc.record({ plan: groupValue, tier: groupValue, amount, score: amount }, { requiredKeys: [] });
const records = fc.array(fc.record({ data: record, afterMinutes: fc.integer({ min: 0, max: 240 }) }), { minLength: 0, maxLength: 14 });

const GROUP_FIELDS = ['data.plan', 'data.tier', 'createdAt:hour', 'createdAt:day', 'createdAt:week', 'createdAt:month', 'updatedAt:day'];
const METRICS = ['sum:data.amount', 'avg:data.amount', 'min:data.score', 'max:data.amount', 'countDistinct:data.plan', 'countDistinct:data.amount', 'sum:data.plan'];
const FILTERS = [undefined, 'data.plan ~* "PR"', 'data.plan !~* "o"', 'data.amount >= 0', 'data.tier != null || data.plan = 1', 'data.plan ~* "%_"'];

const request: fc.Arbitrary<Request> = fc
  .record({
    groupBy: fc.subarray(GROUP_FIELDS, { maxLength: 3 }),
    metrics: fc.subarray(METRICS, { maxLength: 4 }),
    filter: fc.constantFrom(...FILTERS),
    tz: fc.constantFrom(...ZONES),
    limit: fc.integer({ min: 1, max: 6 }),
    sortPicks: fc.array(fc.tuple(fc.nat(), fc.boolean()), { maxLength: 3 }),
  })
  .map(({ groupBy, metrics, filter, tz, limit, sortPicks }) => {
    const sortable = ['count', ...groupBy, ...metrics];
    const sort = [...new Set(sortPicks.map(([i, desc]) => `${desc ? '-' : ''}${sortable[i % sortable.length]}`))]
      .filter((key, i, all) => all.findIndex((other) => other.replace(/^-/, '') === key.replace(/^-/, '')) === i);
    return { groupBy, metrics, filter, tz, limit, sort };
  });

interface Request {
  groupBy: string[];
  metrics: string[];
  filter: string | undefined;
  tz: string;
  limit: number;
  sort: string[];
}

const postgres = inject('postgresUrl') !== null;
(postgres ? it : it.skip)('gives the same aggregates on SQLite and PostgreSQL', { timeout: 600_000 }, async () => {
  let run = 0;
  await fc.assert(
    fc.asyncProperty(records, request, fc.constantFrom(...STARTS), async (rows, asked, start) => {
      run += 1;
      const name = `run${run}`;
      const answers: unknown[] = [];
      for (const { t, owner, program } of sides) {
        // The session's clock first (a session ends when the clock jumps months), then the records' times; the key does not mind.
        t.clock.advance(BASELINE - t.clock.now().getTime());
        expect((await owner.post('/v1/collections', { name })).status).toBe(201);
        t.clock.advance(Date.parse(start) - t.clock.now().getTime());
        for (const { data, afterMinutes } of rows) {
          t.clock.advance(afterMinutes * 60_000);
          expect((await program.post(`/v1/collections/${name}/records`, { data })).status).toBe(201);
        }
        answers.push(await allPages(program, name, asked));
      }
      expect(answers[1]).toEqual(answers[0]);
      // Every matching record is in one group, or skipped for a grouped field that holds an array.
      const [pages] = answers as { data: { count: number }[]; skipped: Record<string, number> }[][];
      const counted = pages!.flatMap((page) => page.data).reduce((total, group) => total + group.count, 0);
      if (!asked.filter) {
        const grouped = asked.groupBy.filter((key) => key.startsWith('data.'));
        const arrays = rows.filter(({ data }) => grouped.some((key) => Array.isArray((data as Record<string, unknown>)[key.slice(5)]))).length;
        expect(counted).toBe(rows.length - arrays);
      }
    }),
    { numRuns: RUNS, seed: SEED, endOnFailure: true },
  );
});

const BASELINE = Date.parse('2026-11-22T10:00:00.000Z');
let sides: { t: TestApp; owner: Client; program: Client }[] = [];
beforeAll(async () => {
  if (!postgres) return;
  sides = await Promise.all((['sqlite', 'postgres'] as const).map(async (engine) => {
    const t = await startTestApp(engine);
    const owner = await signedInOwner(t);
    const key = await owner.post('/v1/keys', { name: 'program', scopes: ['records:read', 'records:create'] });
    return { t, owner, program: new KeyClient(t, key.body.secret) };
  }));
});
afterAll(async () => {
  await Promise.all(sides.map(({ t }) => t.close()));
});

/** Every page of the aggregate, following nextCursor. */
async function allPages(owner: Client, collection: string, asked: Request): Promise<unknown[]> {
  const query = new URLSearchParams({ limit: String(asked.limit), tz: asked.tz });
  if (asked.groupBy.length > 0) query.set('groupBy', asked.groupBy.join(','));
  if (asked.metrics.length > 0) query.set('metrics', asked.metrics.join(','));
  if (asked.sort.length > 0) query.set('sort', asked.sort.join(','));
  if (asked.filter) query.set('filter', asked.filter);
  const pages: unknown[] = [];
  let cursor: string | null = null;
  do {
    if (cursor) query.set('cursor', cursor);
    const reply = await owner.get(`/v1/collections/${collection}/aggregate?${query}`);
    expect(reply.status, `${query} ${JSON.stringify(reply.body)}`).toBe(200);
    pages.push(reply.body);
    cursor = reply.body.nextCursor;
    expect(pages.length).toBeLessThan(50);
  } while (cursor);
  return pages;
}
